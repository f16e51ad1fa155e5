import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { ElicitationRouter, type Elicitor } from '../../src/apps/elicitation-router.js';

/** A transport stand-in: what the router taps is `send` (out) and `onmessage` (in). */
function createTapped() {
  const transport = { send: async () => undefined, onmessage: () => undefined } as unknown as Transport;
  const router = new ElicitationRouter();
  router.tapSend(transport);
  router.tapReceive(transport);
  return { router, transport, receive: (message: unknown) => transport.onmessage!(message as JSONRPCMessage) };
}

const answer = (name: string): Elicitor => async () => ({ action: 'accept', content: { name } });
const question = (taskId?: string) => ({ message: 'Which one?', ...(taskId && { _meta: { 'io.modelcontextprotocol/related-task': { taskId } } }) });

describe('ElicitationRouter and tasks', () => {
  it("sends a task's question to the call that created the task, with several calls in flight", async () => {
    const { router, transport, receive } = createTapped();
    const first = answer('first');
    const second = answer('second');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const startCall = (elicitor: Elicitor, id: number, taskId: string) =>
      router.run(elicitor, async (meta) => {
        await transport.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'research', _meta: meta } });
        receive({ jsonrpc: '2.0', id, result: { task: { taskId, status: 'working' } } });
        await gate;
      });
    const calls = [startCall(first, 1, 'task-a'), startCall(second, 2, 'task-b')];
    await new Promise((resolve) => setImmediate(resolve));

    expect(router.route(question('task-b'), 7)).toBe(second);
    expect(router.route(question('task-a'), 8)).toBe(first);
    // Nothing ties an untagged question to either call: it is declined, never answered with another step's values.
    expect(router.route(question(), 9)).toBeUndefined();
    release();
    await Promise.all(calls);
    // A finished call's task answers nobody.
    expect(router.route(question('task-a'), 10)).toBeUndefined();
  });
});

describe('ElicitationRouter without tasks', () => {
  /** Starts a call that sends a tagged tools/call with `id`, lets `answer` arrive as its response, and waits for `gate`. */
  function startCall(tapped: ReturnType<typeof createTapped>, elicitor: Elicitor, id: number, gate: Promise<void>, answer?: unknown) {
    return tapped.router.run(elicitor, async (meta) => {
      await tapped.transport.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask', _meta: meta } });
      if (answer) tapped.receive({ jsonrpc: '2.0', id, result: answer });
      await gate;
    });
  }

  it('sends a 2025 elicitation/create to the only call in flight, and declines it with none or several', async () => {
    const tapped = createTapped();
    const only = answer('only');
    expect(tapped.router.route(question(), 1)).toBeUndefined();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = startCall(tapped, only, 1, gate);
    await new Promise((resolve) => setImmediate(resolve));
    expect(tapped.router.route(question(), 1)).toBe(only);
    const second = startCall(tapped, answer('other'), 2, gate);
    await new Promise((resolve) => setImmediate(resolve));
    expect(tapped.router.route(question(), 2)).toBeUndefined();
    release();
    await Promise.all([first, second]);
    expect(tapped.router.route(question(), 3)).toBeUndefined();
  });

  it('matches an input_required question by its request key and content, once, with several calls in flight', async () => {
    const tapped = createTapped();
    const asking = answer('asking');
    const bystander = answer('bystander');
    const schema = { type: 'object', properties: { name: { type: 'string' } } };
    const inputRequired = { resultType: 'input_required', inputRequests: { who: { method: 'elicitation/create', params: { message: 'Your name?', requestedSchema: schema } } } };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const calls = [startCall(tapped, bystander, 1, gate), startCall(tapped, asking, 2, gate, inputRequired)];
    await new Promise((resolve) => setImmediate(resolve));

    // Another key, or other content, is not that question.
    expect(tapped.router.route({ message: 'Your name?', requestedSchema: schema }, 'other')).toBeUndefined();
    expect(tapped.router.route({ message: 'Your age?', requestedSchema: schema }, 'who')).toBeUndefined();
    expect(tapped.router.route({ message: 'Your name?', requestedSchema: schema }, 'who')).toBe(asking);
    // Asked once: the same question again is no longer pending, and two calls are in flight.
    expect(tapped.router.route({ message: 'Your name?', requestedSchema: schema }, 'who')).toBeUndefined();
    release();
    await Promise.all(calls);
  });

  it("forgets only the ids of a call that ended: another call with the same answerer keeps its questions", async () => {
    const tapped = createTapped();
    const shared = answer('shared');
    const schema = { type: 'object', properties: { name: { type: 'string' } } };
    const inputRequired = { resultType: 'input_required', inputRequests: { who: { method: 'elicitation/create', params: { message: 'Your name?', requestedSchema: schema } } } };
    let releaseFirst!: () => void;
    let releaseSecond!: () => void;
    const first = startCall(tapped, shared, 1, new Promise<void>((resolve) => (releaseFirst = resolve)));
    const second = startCall(tapped, shared, 2, new Promise<void>((resolve) => (releaseSecond = resolve)), inputRequired);
    await new Promise((resolve) => setImmediate(resolve));
    releaseFirst();
    await first;
    // The second call still runs: its pending question is routed to it, and it is the one call in flight.
    expect(tapped.router.route({ message: 'Your name?', requestedSchema: schema }, 'who')).toBe(shared);
    expect(tapped.router.route(question(), 3)).toBe(shared);
    releaseSecond();
    await second;
    expect(tapped.router.route(question(), 4)).toBeUndefined();
  });

  it('ignores a tools/call without its tag and the responses to other requests', async () => {
    const tapped = createTapped();
    await tapped.transport.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'ask' } });
    tapped.receive({ jsonrpc: '2.0', id: 5, result: { resultType: 'input_required', inputRequests: { k: { params: { message: 'Q' } } } } });
    tapped.receive({ jsonrpc: '2.0', id: 6, result: { task: { taskId: 'stray' } } });
    expect(tapped.router.route({ message: 'Q' }, 'k')).toBeUndefined();
    expect(tapped.router.route(question('stray'), 7)).toBeUndefined();
  });
});
