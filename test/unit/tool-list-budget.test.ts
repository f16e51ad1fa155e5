import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ToolListBudget } from '../../src/apps/tool-list-budget.js';

/** A transport that records what reaches the client, tapped by a budget of `limit` bytes. */
function tapped(limit: number) {
  const received: JSONRPCMessage[] = [];
  const transport = { send: async () => undefined, onmessage: (message: JSONRPCMessage) => void received.push(message) } as unknown as Transport;
  const budget = new ToolListBudget(limit);
  budget.tapSend(transport);
  budget.tapReceive(transport);
  const list = (id: number, cursor?: string) => transport.send({ jsonrpc: '2.0', id, method: 'tools/list', ...(cursor && { params: { cursor } }) });
  const page = (id: number, chars: number) => transport.onmessage!({ jsonrpc: '2.0', id, result: { tools: [{ name: 'x'.repeat(chars) }] } } as JSONRPCMessage);
  return { budget, received, list, page, transport };
}

describe('ToolListBudget', () => {
  it('passes pages through while the listing stays within the limit, counting its pages together', async () => {
    const { budget, received, list, page } = tapped(1_000);
    await list(1);
    page(1, 400);
    await list(2, 'next');
    page(2, 400);
    expect(received.map((message) => 'result' in message)).toEqual([true, true]);
    await list(3, 'again');
    page(3, 400);
    expect(received[2]).toMatchObject({ id: 3, error: { code: -32603, message: 'its tool list is larger than its max-result of 1000B (all its pages together)' } });
    expect(budget.refused).toBe('its tool list is larger than its max-result of 1000B (all its pages together)');
  });

  it('starts counting again with a listing without a cursor, and leaves other answers alone', async () => {
    const { budget, received, list, page, transport } = tapped(1_000);
    await list(1);
    page(1, 900);
    await list(2);
    page(2, 900);
    expect(received.every((message) => 'result' in message)).toBe(true);
    expect(budget.refused).toBeUndefined();
    page(7, 5_000); // not an answer to a tools/list
    transport.onmessage!({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' } as JSONRPCMessage);
    expect(received).toHaveLength(4);
    expect('result' in received[2]).toBe(true);
  });
});
