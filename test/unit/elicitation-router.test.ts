import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { ElicitationRouter, type Elicitor } from '../../src/apps/elicitation-router.js';

/** A transport stand-in: what the router taps is `send` (out) and `onmessage` (in). */
function createTapped() {
  const transport = { send: async () => undefined, onmessage: (_message: JSONRPCMessage) => undefined } as unknown as Transport;
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
