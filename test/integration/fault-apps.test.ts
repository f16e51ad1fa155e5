// The faulty fixture server (test/apps/faulty.js) driven by the raw v2 SDK client. Only what pins
// the SDK's own behaviour is here, the ground the runner builds on: protocol negotiation, the client-side
// error each fault produces (timeout, protocol error, closed connection, failed connect), elicitation on a
// 2025-only server, and what the SDK's close does and does not kill. What the fixture's tools do (echo,
// counters, images, progress, crash_once, junk on stdout, a slow start) is covered through the runner
// in scheduler, run-history and failure-kinds.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, ProtocolError, SdkError } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { faultyArgs } from '../helpers/workspace.js';

const MODERN = '2026-07-28';

// auto: versionNegotiation 'auto' (2026-07-28 when offered); plain: the SDK default (2025 initialize).
type Era = 'auto' | 'plain';
type Block = { type: string; text?: string; data?: string; mimeType?: string; uri?: string; resource?: { uri: string; blob?: string; mimeType?: string } };
type ToolResult = { content: Block[]; structuredContent?: Record<string, unknown>; isError?: boolean };
type Started = { client: Client; pid: number | null; stderr: () => string };

let dir: string;
// Per-test processes, killed after each test; `shared` ones live for a whole describe block.
let started: Started[] = [];
const shared: Started[] = [];
// Grandchildren: the SDK neither knows nor kills them.
const strayPids = new Set<number>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'runner-fault-apps-'));
});

afterEach(async () => {
  const closing = started;
  started = [];
  await stopAll(closing);
});

afterAll(async () => {
  await stopAll(shared.splice(0));
  await rm(dir, { recursive: true, force: true });
});

async function stopAll(servers: Started[]): Promise<void> {
  // SIGKILL first: a polite close of a server that ignores SIGTERM costs the SDK 4 s.
  for (const { pid } of servers) killQuietly(pid);
  await Promise.all(servers.map(({ client }) => client.close().catch(() => {})));
  for (const pid of strayPids) killQuietly(pid);
  strayPids.clear();
}

function killQuietly(pid: number | null | undefined): void {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Polls `check` every 20 ms; true as soon as it holds, false after `withinMs`.
async function waitFor(check: () => boolean, withinMs = 2000): Promise<boolean> {
  for (let waited = 0; waited < withinMs; waited += 20) {
    if (check()) return true;
    await sleep(20);
  }
  return check();
}

const waitForExit = (pid: number) => waitFor(() => !isAlive(pid));

function newClient(era: Era): Client {
  const client = new Client(
    { name: 'fault-apps-test', version: '0.0.0' },
    {
      ...(era === 'auto' && { versionNegotiation: { mode: 'auto' as const } }),
      capabilities: { elicitation: { form: {} } },
    },
  );
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
  // Junk lines and probe noise surface here; they must not break anything.
  client.onerror = () => {};
  return client;
}

/** Spawn faulty.js with `flags`; connect() may reject, in which case the rejection propagates. */
async function start(flags: string[], era: Era = 'auto', connectOptions?: { timeout?: number }, owner = started): Promise<Started> {
  const client = newClient(era);
  const transport = new StdioClientTransport({ command: process.execPath, args: [...faultyArgs, ...flags], stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const entry: Started = { client, pid: null, stderr: () => stderr };
  owner.push(entry);
  await client.connect(transport, connectOptions);
  entry.pid = transport.pid;
  return entry;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}, options?: Parameters<Client['callTool']>[1]): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args }, options)) as ToolResult;
}

async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

async function counterLines(file: string): Promise<string[]> {
  const body = await readFile(file, 'utf8').catch(() => '');
  return body.split('\n').filter(Boolean);
}

let fileNumber = 0;
const freshPath = (name: string) => join(dir, `${++fileNumber}-${name}`);

describe('negotiation', () => {
  it('serves 2026-07-28 by default and only 2025 with --legacy-only', async () => {
    const modern = await start([], 'auto');
    expect(modern.client.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(modern.client.getServerVersion()?.name).toBe('faulty');

    const legacy = await start(['--legacy-only', '--name', 'old-faulty'], 'auto');
    expect(legacy.client.getNegotiatedProtocolVersion()).toMatch(/^2025-/);
    expect(legacy.client.getServerVersion()?.name).toBe('old-faulty');

    const plain = await start([], 'plain');
    expect(plain.client.getNegotiatedProtocolVersion()).toMatch(/^2025-/);
  });

});

describe.each<Era>(['auto', 'plain'])('tools over %s negotiation', (era) => {
  // One server for the tools that leave it alive; crashes and junk get their own.
  const counter = () => join(dir, `shared-${era}-counter.txt`);
  let client: Client;
  beforeAll(async () => {
    ({ client } = await start(['--counter', counter()], era, undefined, shared));
  });

  it('hang never answers, stays responsive, and an aborted call rejects with SdkError REQUEST_TIMEOUT', async () => {
    const controller = new AbortController();
    const hanging = call(client, 'hang', {}, { signal: controller.signal });
    // Other calls still get answers while one hangs.
    expect((await call(client, 'echo', { text: 'still here' })).structuredContent).toEqual({ text: 'still here' });
    controller.abort();
    const error = await rejection(hanging);
    // The SDK files an abort whose reason is not an SdkError under the timeout code; only the message differs.
    expect(error).toBeInstanceOf(SdkError);
    expect(error).toMatchObject({ code: 'REQUEST_TIMEOUT', message: 'AbortError: This operation was aborted' });

    const timedOut = await rejection(call(client, 'hang', {}, { timeout: 100 }));
    expect(timedOut).toMatchObject({ code: 'REQUEST_TIMEOUT', message: 'Request timed out', data: { timeout: 100 } });
    expect((await call(client, 'echo', { text: 'after' })).structuredContent).toEqual({ text: 'after' });
  });

  it('rpc_error arrives as a ProtocolError with the requested code, fail as isError', async () => {
    const error = await rejection(call(client, 'rpc_error', { code: -32001 }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ code: -32001, message: 'faulty: rpc error -32001', data: { requested: -32001 } });
    expect(await rejection(call(client, 'rpc_error'))).toMatchObject({ code: -32603 });

    expect(await call(client, 'fail', { message: 'nope' })).toMatchObject({ isError: true, content: [{ type: 'text', text: 'nope' }] });
  });

  it('crash mid-call rejects the pending call with SdkError CONNECTION_CLOSED, after its side effect', async () => {
    const crashCounter = freshPath('counter.txt');
    const server = await start(['--counter', crashCounter], era);
    // A long timeout: the call must fail because the process died, not because time ran out.
    const error = await rejection(call(server.client, 'crash', { afterSideEffect: true, delayMs: 20 }, { timeout: 20_000 }));
    expect(error).toBeInstanceOf(SdkError);
    expect(error).toMatchObject({ code: 'CONNECTION_CLOSED', message: 'Connection closed' });
    expect(await counterLines(crashCounter)).toEqual(['crash']);
  });

});

describe('ask_name on a hand-wired 2025-only server', () => {
  it('uses elicitation/create and reports a decline', async () => {
    const { client } = await start(['--legacy-only'], 'auto');
    let asked = 0;
    client.setRequestHandler('elicitation/create', async () => {
      asked++;
      return asked === 1 ? { action: 'accept', content: { name: 'Grace' } } : { action: 'decline' };
    });
    expect((await call(client, 'ask_name')).content[0].text).toBe('hello Grace');
    expect((await call(client, 'ask_name')).content[0].text).toBe('declined');
  });
});

describe.each<Era>(['auto', 'plain'])('start-up faults over %s negotiation', (era) => {
  it('--fail-handshake makes connect() reject with SdkError CONNECTION_CLOSED', async () => {
    const error = await rejection(start(['--fail-handshake'], era));
    expect(error).toBeInstanceOf(SdkError);
    expect(error).toMatchObject({ code: 'CONNECTION_CLOSED', message: 'Connection closed' });
    expect(started.at(-1)!.stderr()).toContain('faulty: refusing handshake');
  });

  it('--crash-on-start makes connect() reject with SdkError CONNECTION_CLOSED', async () => {
    const error = await rejection(start(['--crash-on-start'], era));
    expect(error).toBeInstanceOf(SdkError);
    expect(error).toMatchObject({ code: 'CONNECTION_CLOSED', message: 'Connection closed' });
    expect(started.at(-1)!.stderr()).toContain('faulty: boom at startup');
  });

  it('--never-answer makes connect() reject with SdkError REQUEST_TIMEOUT', async () => {
    // auto: the probe times out (a silent stdio server counts as legacy), then initialize times out too.
    const error = await rejection(start(['--never-answer'], era, { timeout: 200 }));
    expect(error).toBeInstanceOf(SdkError);
    expect(error).toMatchObject({ code: 'REQUEST_TIMEOUT', message: 'Request timed out', data: { timeout: 200 } });
  });
});

describe('process faults', () => {
  it('--spawn-grandchild leaves live grandchildren that outlive a plain SDK close', async () => {
    const pidFile = freshPath('grandchildren.txt');
    const { client } = await start(['--spawn-grandchild', pidFile], 'auto');
    // connect() can resolve on the probe's verdict alone; a call proves the session process is up.
    await call(client, 'echo');
    const pids = (await counterLines(pidFile)).map(Number);
    pids.forEach((pid) => strayPids.add(pid));
    // One from the session process and one from the SDK's disposable version probe.
    expect(pids).toHaveLength(2);
    await client.close();
    for (const pid of pids) expect(isAlive(pid)).toBe(true);
  });

  it('--ignore-sigterm still exits when stdin closes', async () => {
    const { client, pid, stderr } = await start(['--ignore-sigterm'], 'plain');
    process.kill(pid!, 'SIGTERM');
    expect(await waitFor(() => stderr().includes('faulty: ignoring SIGTERM'))).toBe(true);
    expect(isAlive(pid!)).toBe(true);
    await client.close();
    expect(await waitForExit(pid!)).toBe(true);
  });

  it('--ignore-sigterm --ignore-stdin-close outlives stdin end and SIGTERM, not SIGKILL', async () => {
    const { client, pid, stderr } = await start(['--ignore-sigterm', '--ignore-stdin-close'], 'plain');
    // close() ends stdin, waits 2 s, sends SIGTERM, waits 2 s, then SIGKILLs; step in before that.
    const closing = client.close();
    expect(await waitFor(() => stderr().includes('faulty: stdin ended; staying up'))).toBe(true);
    process.kill(pid!, 'SIGTERM');
    expect(await waitFor(() => stderr().includes('faulty: ignoring SIGTERM'))).toBe(true);
    expect(isAlive(pid!)).toBe(true);
    process.kill(pid!, 'SIGKILL');
    await closing;
    expect(await waitForExit(pid!)).toBe(true);
  });
});
