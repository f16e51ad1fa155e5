import { Client, InMemoryTransport, SERVER_INFO_META_KEY, type ClientOptions, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { plainTextCallResult, RunnerClient } from '../../src/apps/runner-client.js';

// RunnerClient checks text-only tools/call results by hand and leaves every
// other shape to the SDK. Whatever a server answers, a call through it must
// end exactly as the SDK's own client ends it: the same value (keys in the
// same order) or the same error message, on both protocol eras.

/** Results the hand check takes: its value must be the SDK's, byte for byte. */
const TEXT_ONLY: unknown[] = [
  { content: [{ type: 'text', text: 'plain' }] },
  { content: [] },
  { content: [{ text: 'keys in another order', type: 'text' }, { type: 'text', text: '' }] },
  { isError: true, content: [{ type: 'text', text: 'failed' }] },
  { structuredContent: { b: 1, a: [1, { c: null }] }, content: [{ type: 'text', text: '{}' }], isError: false },
  // What a 2026 server stamps on every result: its name and version (and any of the description's other strings).
  { content: [{ type: 'text', text: 'x' }], structuredContent: { text: 'x' }, _meta: { [SERVER_INFO_META_KEY]: { name: 'faulty', version: '1.0.0' } } },
  {
    isError: false,
    _meta: { [SERVER_INFO_META_KEY]: { name: 'f', title: 't', version: '1', websiteUrl: 'https://example.com', description: 'd' } },
    content: [{ type: 'text', text: 'x' }],
  },
];

/** Results the hand check leaves to the SDK: accepted, rebuilt or refused there. */
const OTHERS: unknown[] = [
  { content: [{ type: 'text', text: 'x', annotations: { priority: 0.5 } }] },
  { content: [{ type: 'text', text: 'x', extra: 1 }] },
  { content: [{ type: 'text', text: 'x' }], extra: 2 },
  { _meta: { note: 'x' }, content: [{ type: 'text', text: 'x' }] },
  // The server's description in another order (the 2026 schema reorders it, 2025 keeps it), with more, or with a number.
  { _meta: { [SERVER_INFO_META_KEY]: { version: '1', name: 'f' } }, content: [{ type: 'text', text: 'x' }] },
  { _meta: { [SERVER_INFO_META_KEY]: { name: 'f', icons: [], version: '1' } }, content: [{ type: 'text', text: 'x' }] },
  { _meta: { [SERVER_INFO_META_KEY]: { name: 'f', version: '1', extra: 'e' } }, content: [{ type: 'text', text: 'x' }] },
  { _meta: { [SERVER_INFO_META_KEY]: { name: 'f', version: 1 } }, content: [{ type: 'text', text: 'x' }] },
  { _meta: { [SERVER_INFO_META_KEY]: { name: 'f', version: '1' }, note: 'x' }, content: [{ type: 'text', text: 'x' }] },
  { _meta: {}, content: [{ type: 'text', text: 'x' }] },
  { content: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }] },
  { content: [{ type: 'resource_link', uri: 'file:///tmp/a', name: 'a' }] },
  { content: [], structuredContent: [1, 2] },
  { content: [], structuredContent: 'text' },
  { content: [], structuredContent: JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') },
  {},
  { task: { taskId: 't' } },
  { content: 'not a list' },
  { content: [{ type: 'text', text: 7 }] },
  { content: [{ type: 'text' }] },
  { content: [null] },
  { content: [{ type: 'text', text: 'x' }], isError: 'yes' },
];

const ERAS: Record<string, Pick<ClientOptions, 'versionNegotiation' | 'supportedProtocolVersions'>> = {
  '2026-07-28': { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  '2025-11-25': { supportedProtocolVersions: ['2025-11-25'] },
};

/** A server whose every tools/call answer is replaced, on the wire, by `answer.next`. */
async function connect(client: Client) {
  const answer: { next: unknown } = { next: undefined };
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const send = serverSide.send.bind(serverSide);
  serverSide.send = (message: JSONRPCMessage, options) => {
    if (!('result' in message) || !JSON.stringify(message.result).includes('"replaced"')) return send(message, options);
    // A 2026 server stamps every result with its type; the test's answer gets the same stamp.
    const stamp = 'resultType' in message.result ? { resultType: message.result.resultType } : {};
    return send({ ...message, result: { ...stamp, ...(answer.next as object) } }, options);
  };
  // Both eras on one transport, as a stdio server serves them.
  const served = serveStdio(
    () => {
      const server = new McpServer({ name: 'answers', version: '1' });
      server.registerTool('answer', { description: 'answers with the test result' }, () => ({ content: [{ type: 'text', text: 'replaced' }] }));
      server.registerTool('echo', { description: 'answers as it is written' }, () => ({ content: [{ type: 'text', text: 'echo' }] }));
      return server;
    },
    { transport: serverSide },
  );
  await client.connect(clientSide);
  return { answer, close: () => Promise.all([client.close(), served.close()]) };
}

async function outcome(client: Client): Promise<{ value: string } | { error: string }> {
  try {
    return { value: JSON.stringify(await client.callTool({ name: 'answer', arguments: {} })) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe('plainTextCallResult', () => {
  it('takes text-only results and nothing else', () => {
    for (const result of TEXT_ONLY) expect(plainTextCallResult(result), JSON.stringify(result)).toBeDefined();
    for (const result of OTHERS) expect(plainTextCallResult(result), JSON.stringify(result)).toBeUndefined();
  });

  it('rebuilds the result: blocks and keys are new objects, in the schema order', () => {
    const sent = { isError: false, content: [{ text: 'a', type: 'text' }] };
    const checked = plainTextCallResult(sent);
    expect(JSON.stringify(checked)).toBe('{"content":[{"type":"text","text":"a"}],"isError":false}');
    expect(checked?.content[0]).not.toBe(sent.content[0]);
  });
});

describe.each(Object.entries(ERAS))('RunnerClient on %s', (version, eraOptions) => {
  const clients = { runner: new RunnerClient({ name: 'runner', version: '0' }, eraOptions), sdk: new Client({ name: 'sdk', version: '0' }, eraOptions) };
  const pairs = Promise.all([connect(clients.runner), connect(clients.sdk)]);
  afterAll(async () => void (await Promise.all((await pairs).map((pair) => pair.close()))));

  it('negotiated the era', async () => {
    await pairs;
    expect(clients.runner.getNegotiatedProtocolVersion()).toBe(version);
    expect(clients.sdk.getNegotiatedProtocolVersion()).toBe(version);
  });

  async function both(result: unknown) {
    const [runnerSide, sdkSide] = await pairs;
    runnerSide.answer.next = result;
    sdkSide.answer.next = result;
    return { runner: await outcome(clients.runner), sdk: await outcome(clients.sdk) };
  }

  it.each(TEXT_ONLY.map((result) => [JSON.stringify(result), result]))('returns the value the SDK returns for %s', async (_name, result) => {
    const { runner, sdk } = await both(result);
    expect(runner).toEqual(sdk);
    expect(runner).toEqual({ value: expect.not.stringContaining('replaced') });
  });

  it.each(OTHERS.map((result) => [JSON.stringify(result), result]))('ends a call answered with %s as the SDK does', async (_name, result) => {
    const { runner, sdk } = await both(result);
    expect(runner).toEqual(sdk);
    expect(JSON.stringify(runner)).not.toContain('replaced');
  });

  it("checks a real server's text answer itself (a 2026 server stamps its name on it)", async () => {
    await pairs;
    const codec = (clients.runner as unknown as { _wireCodec(): { validateResult(method: string, value: unknown): unknown } })._wireCodec();
    const check = vi.spyOn(codec, 'validateResult');
    try {
      const result = await clients.runner.callTool({ name: 'echo', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'echo' }]);
      expect(check).not.toHaveBeenCalled();
      // The check is the SDK's again for anything else.
      const [runnerSide] = await pairs;
      runnerSide.answer.next = { content: [{ type: 'text', text: 'x', annotations: { priority: 0.5 } }] };
      await clients.runner.callTool({ name: 'answer', arguments: {} });
      expect(check).toHaveBeenCalledTimes(1);
    } finally {
      check.mockRestore();
    }
  });

  it('calls methods other than tools/call as the SDK does', async () => {
    await pairs;
    expect(await clients.runner.listTools()).toEqual(await clients.sdk.listTools());
  });
});
