import type { Transport } from '@modelcontextprotocol/client';
import { passReceived, watchSent } from './transport-taps.js';

/** A call's answerer for the questions a tool asks mid-call. */
export type Elicitor = (request: { message: string; requestedSchema: { properties?: Record<string, unknown>; required?: string[] } }) => Promise<{
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}>;

type Id = string | number;

/** One call in flight: who answers its questions, and the request and task ids that lead to it. */
interface InFlightCall {
  elicitor: Elicitor;
  requestIds: Id[];
  taskIds: string[];
}

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
  private readonly byTag = new Map<string, InFlightCall>();
  private readonly inFlight = new Set<InFlightCall>();
  private readonly byRequestId = new Map<Id, InFlightCall>();
  private readonly byTaskId = new Map<string, InFlightCall>();
  /** Questions from input_required results not yet asked: key → { call, question JSON }. */
  private readonly pending: { call: InFlightCall; key: string; question: string }[] = [];

  /**
   * Runs `call` as the call that `elicitor` answers for. `call` must put the
   * given `_meta` on its `tools/call` request: the tap below finds the call by
   * it. (AsyncLocalStorage cannot follow the SDK's answer to an
   * `input_required` result, and would slow every promise in the process.)
   */
  async run<T>(elicitor: Elicitor, call: (meta: Record<string, string>) => Promise<T>): Promise<T> {
    const tag = String(++this.lastTag);
    const entry: InFlightCall = { elicitor, requestIds: [], taskIds: [] };
    this.byTag.set(tag, entry);
    this.inFlight.add(entry);
    try {
      return await call({ [CALL_TAG_KEY]: tag });
    } finally {
      // Only this call's own ids: scanning every id in flight made each call's end cost as much as the calls in flight.
      this.byTag.delete(tag);
      this.inFlight.delete(entry);
      for (const id of entry.requestIds) if (this.byRequestId.get(id) === entry) this.byRequestId.delete(id);
      for (const id of entry.taskIds) if (this.byTaskId.get(id) === entry) this.byTaskId.delete(id);
      for (let i = this.pending.length - 1; i >= 0; i--) if (this.pending[i].call === entry) this.pending.splice(i, 1);
    }
  }

  /** Taps a transport's outgoing messages; call before connect. */
  tapSend(transport: Transport): void {
    watchSent(transport, (message) => {
      if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return;
      const tag = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.[CALL_TAG_KEY];
      const entry = typeof tag === 'string' ? this.byTag.get(tag) : undefined;
      if (entry) {
        this.byRequestId.set(message.id, entry);
        entry.requestIds.push(message.id);
      }
    });
  }

  /** Taps incoming messages; call after connect (the SDK sets `onmessage` while connecting). */
  tapReceive(transport: Transport): void {
    passReceived(transport, (message) => {
      if ('id' in message && message.id !== undefined && !('method' in message)) this.noteResponse(message.id, 'result' in message ? message.result : undefined);
      return message;
    });
  }

  /** The elicitor for a question, or undefined when it cannot be told. */
  route(params: { message: string; requestedSchema?: unknown; _meta?: Record<string, unknown> }, requestKey: Id): Elicitor | undefined {
    const taskId = (params._meta?.[RELATED_TASK_KEY] as { taskId?: unknown } | undefined)?.taskId;
    if (typeof taskId === 'string' && this.byTaskId.has(taskId)) return this.byTaskId.get(taskId)!.elicitor;
    const question = questionOf(params);
    const index = this.pending.findIndex((entry) => entry.key === String(requestKey) && entry.question === question);
    if (index >= 0) return this.pending.splice(index, 1)[0].call.elicitor;
    return this.inFlight.size === 1 ? [...this.inFlight][0].elicitor : undefined;
  }

  private noteResponse(id: Id, result: unknown): void {
    const call = this.byRequestId.get(id);
    if (!call) return;
    this.byRequestId.delete(id);
    const body = result as { resultType?: string; inputRequests?: Record<string, { method?: string; params?: unknown }>; task?: { taskId?: unknown } } | undefined;
    if (typeof body?.task?.taskId === 'string') {
      this.byTaskId.set(body.task.taskId, call);
      call.taskIds.push(body.task.taskId);
    }
    if (body?.resultType !== 'input_required' || !body.inputRequests) return;
    for (const [key, request] of Object.entries(body.inputRequests)) {
      const params = (request.params ?? request) as { message: string; requestedSchema?: unknown };
      this.pending.push({ call, key, question: questionOf(params) });
    }
  }
}

function questionOf(params: { message?: string; requestedSchema?: unknown }): string {
  return JSON.stringify([params.message ?? '', params.requestedSchema ?? null]);
}
