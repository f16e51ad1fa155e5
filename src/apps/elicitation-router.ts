import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';

/** A call's answerer for the questions a tool asks mid-call. */
export type Elicitor = (request: { message: string; requestedSchema: { properties?: Record<string, unknown>; required?: string[] } }) => Promise<{
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}>;

type Id = string | number;

/** The `_meta` key that tags a runner's `tools/call` request with the call it belongs to. */
export const CALL_TAG_KEY = 'dev.runner/call';
/** The `_meta` key with which a 2025-11-25 app ties a question to the task it asks for. */
const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

/**
 * Finds which in-flight call a tool's question belongs to. The question does
 * not say: on 2026-07-28 it arrives as an `input_required` result that the
 * SDK fulfils after the response left the call's async context, on 2025 as
 * an `elicitation/create` request from the server. So the router watches the
 * wire: each `tools/call` carries a `_meta` tag naming its call, the tap maps
 * the request id to that call, and an `input_required` result is matched by
 * its request id and the question's content. A 2025-era `elicitation/create` carries nothing
 * that links it to a call on stdio (its `_meta.progressToken` is the server's
 * own), so it goes to the only call in flight that can answer; with several
 * in flight it is declined rather than answered with another step's values.
 * A task's question names its task (`_meta` related-task), and the task id
 * came back in the answer to the tagged `tools/call`.
 */
export class ElicitationRouter {
  private lastTag = 0;
  private readonly byTag = new Map<string, Elicitor>();
  private readonly inFlight = new Set<Elicitor>();
  private readonly byRequestId = new Map<Id, Elicitor>();
  private readonly byTaskId = new Map<string, Elicitor>();
  /** Questions from input_required results not yet asked: key → { elicitor, question JSON }. */
  private readonly pending: { elicitor: Elicitor; key: string; question: string }[] = [];

  /**
   * Runs `call` as the call that `elicitor` answers for. `call` must put the
   * given `_meta` on its `tools/call` request: the tap below finds the call by
   * it. (AsyncLocalStorage cannot follow the SDK's answer to an
   * `input_required` result, and would slow every promise in the process.)
   */
  async run<T>(elicitor: Elicitor, call: (meta: Record<string, string>) => Promise<T>): Promise<T> {
    const tag = String(++this.lastTag);
    this.byTag.set(tag, elicitor);
    this.inFlight.add(elicitor);
    try {
      return await call({ [CALL_TAG_KEY]: tag });
    } finally {
      this.byTag.delete(tag);
      this.inFlight.delete(elicitor);
      for (const [key, value] of this.byRequestId) if (value === elicitor) this.byRequestId.delete(key);
      for (const [key, value] of this.byTaskId) if (value === elicitor) this.byTaskId.delete(key);
      for (let i = this.pending.length - 1; i >= 0; i--) if (this.pending[i].elicitor === elicitor) this.pending.splice(i, 1);
    }
  }

  /** Taps a transport's outgoing messages; call before connect. */
  tapSend(transport: Transport): void {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if ('method' in message && message.method === 'tools/call' && 'id' in message) {
        const tag = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.[CALL_TAG_KEY];
        const elicitor = typeof tag === 'string' ? this.byTag.get(tag) : undefined;
        if (elicitor) this.byRequestId.set(message.id, elicitor);
      }
      return send(message, options);
    };
  }

  /** Taps incoming messages; call after connect (the SDK sets `onmessage` while connecting). */
  tapReceive(transport: Transport): void {
    const receive = transport.onmessage;
    if (!receive) return;
    transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
      if ('id' in message && message.id !== undefined && !('method' in message)) this.noteResponse(message.id, 'result' in message ? message.result : undefined);
      (receive as (message: JSONRPCMessage, extra?: unknown) => void)(message, extra);
    };
  }

  /** The elicitor for a question, or undefined when it cannot be told. */
  route(params: { message: string; requestedSchema?: unknown; _meta?: Record<string, unknown> }, requestKey: Id): Elicitor | undefined {
    const taskId = (params._meta?.[RELATED_TASK_KEY] as { taskId?: unknown } | undefined)?.taskId;
    if (typeof taskId === 'string' && this.byTaskId.has(taskId)) return this.byTaskId.get(taskId);
    const question = questionOf(params);
    const index = this.pending.findIndex((entry) => entry.key === String(requestKey) && entry.question === question);
    if (index >= 0) return this.pending.splice(index, 1)[0].elicitor;
    return this.inFlight.size === 1 ? [...this.inFlight][0] : undefined;
  }

  private noteResponse(id: Id, result: unknown): void {
    const elicitor = this.byRequestId.get(id);
    if (!elicitor) return;
    this.byRequestId.delete(id);
    const body = result as { resultType?: string; inputRequests?: Record<string, { method?: string; params?: unknown }>; task?: { taskId?: unknown } } | undefined;
    if (typeof body?.task?.taskId === 'string') this.byTaskId.set(body.task.taskId, elicitor);
    if (body?.resultType !== 'input_required' || !body.inputRequests) return;
    for (const [key, request] of Object.entries(body.inputRequests)) {
      const params = (request.params ?? request) as { message: string; requestedSchema?: unknown };
      this.pending.push({ elicitor, key, question: questionOf(params) });
    }
  }
}

function questionOf(params: { message?: string; requestedSchema?: unknown }): string {
  return JSON.stringify([params.message ?? '', params.requestedSchema ?? null]);
}
