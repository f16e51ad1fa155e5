import { SdkError, SdkErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/client';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { MessageTooLargeError } from '../../src/apps/line-buffer.js';
import { isAlive, signalGroup } from '../../src/apps/process-tree.js';
import { AppStdioTransport, SendQueueFullError, type AppStdioTransportOptions } from '../../src/apps/stdio-transport.js';

// The stdio transport against tiny apps run with `node -e`: each one reads
// JSON-RPC lines on stdin and does what the test needs of it.

/** Answers every request with its process group and `params.text`, after a junk line; `big` sends an endless line. */
const ECHO = `
const pgid = Number(require('fs').readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2]);
let pending = '';
const echo = () => process.stdin.on('data', (chunk) => {
  pending += chunk;
  for (let newline = pending.indexOf('\\n'); newline !== -1; newline = pending.indexOf('\\n')) {
    const message = JSON.parse(pending.slice(0, newline));
    pending = pending.slice(newline + 1);
    if (message.method === 'big') process.stdout.write('x'.repeat(message.params.bytes));
    else process.stdout.write('not json\\n' + JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { pgid, text: message.params.text } }) + '\\n');
  }
});
`;
const ECHO_APP = `process.stderr.write('starting\\n');${ECHO}echo();`;

/** Reads nothing of its stdin until SIGUSR2, then echoes. */
const LATE_READER_APP = `${ECHO}process.on('SIGUSR2', echo); setInterval(() => {}, 60_000); process.stderr.write('ready\\n');`;

/** Ignores stdin closing and SIGTERM: only SIGKILL ends it. */
const STUBBORN_APP = `
process.on('SIGTERM', () => process.stderr.write('SIGTERM ignored\\n'));
process.stdin.resume();
setInterval(() => {}, 60_000);
process.stderr.write('ready\\n');
`;

/** Leaves a grandchild holding its stdout, then exits when stdin closes. */
const PARENT_APP = `
const { spawn } = require('child_process');
const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { stdio: ['ignore', 'inherit', 'inherit'] });
process.stderr.write('grandchild ' + grandchild.pid + '\\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`;

const transports: AppStdioTransport[] = [];
const groups: number[] = [];

afterEach(async () => {
  for (const pid of groups.splice(0)) signalGroup(pid, 'SIGKILL');
  await Promise.all(transports.splice(0).map((transport) => transport.close()));
});

function open(script: string, options: Partial<AppStdioTransportOptions> = {}) {
  const transport = new AppStdioTransport({ command: process.execPath, args: ['-e', script], maxMessageBytes: 1024 * 1024, ...options });
  transports.push(transport);
  const received: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  let stderr = '';
  transport.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  transport.onmessage = (message) => received.push(message);
  transport.onerror = (error) => errors.push(error);
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  const spawned = new Promise<number>((resolve) => (transport.onspawn = resolve));
  return { transport, received, errors, closed, spawned, stderr: () => stderr };
}

/** Opens and starts the app; its group is killed after the test. */
async function startApp(script: string, options: Partial<AppStdioTransportOptions> = {}) {
  const app = open(script, options);
  await app.transport.start();
  const pid = await app.spawned;
  groups.push(pid);
  return { app, pid };
}

/** Resolves once `check` holds, checking after each chunk of the app's stderr. */
function onStderr(app: ReturnType<typeof open>, check: (stderr: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    const test = () => check(app.stderr()) && resolve(app.stderr());
    test();
    app.transport.stderr.on('data', () => setImmediate(test));
  });
}

function nextMessage(app: ReturnType<typeof open>): Promise<JSONRPCMessage> {
  const seen = app.received.length;
  return new Promise((resolve) => {
    const onmessage = app.transport.onmessage!;
    app.transport.onmessage = (message) => {
      onmessage(message);
      if (app.received.length > seen) resolve(app.received[seen]!);
    };
  });
}

/** Resolves once `count` messages arrived. */
function messages(app: ReturnType<typeof open>, count: number): Promise<JSONRPCMessage[]> {
  return new Promise((resolve) => {
    const onmessage = app.transport.onmessage!;
    const check = () => app.received.length >= count && resolve(app.received.slice(0, count));
    app.transport.onmessage = (message) => {
      onmessage(message);
      check();
    };
    check();
  });
}

/** Counts the writes to the app's stdin from now on. */
function countWrites(transport: AppStdioTransport): () => number {
  const stdin = (transport as unknown as { child: ChildProcess }).child.stdin!;
  const write = stdin.write.bind(stdin);
  let writes = 0;
  stdin.write = ((...args: Parameters<typeof write>) => {
    writes++;
    return write(...args);
  }) as typeof stdin.write;
  return () => writes;
}

function echoRequest(id: number, text: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, method: 'echo', params: { text } };
}

/** Lets the event loop run a few turns: what is still pending then waits on the app. */
async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('AppStdioTransport', () => {
  it('sends the messages of one turn in one write, in order, as separate lines', async () => {
    const { app } = await startApp(ECHO_APP);
    const writes = countWrites(app.transport);
    const answers = messages(app, 3);
    await Promise.all([1, 2, 3].map((id) => app.transport.send(echoRequest(id, `m${id}`))));
    expect(writes()).toBe(1);
    expect((await answers).map((message) => 'result' in message && message.result.text)).toEqual(['m1', 'm2', 'm3']);
    await app.transport.send(echoRequest(4, 'm4'));
    expect(writes()).toBe(2);
    expect(app.errors).toEqual([]);
  });

  it('waits for drain while the app does not read, queues up to maxQueuedBytes meanwhile, then writes the rest at once', async () => {
    const { app, pid } = await startApp(LATE_READER_APP, { maxQueuedBytes: 1024 });
    await onStderr(app, (text) => text.includes('ready'));
    const writes = countWrites(app.transport);
    const settled: number[] = [];
    const send = (id: number, text: string) => app.transport.send(echoRequest(id, text)).then(() => settled.push(id));
    // Larger than the pipe and the stream's buffer together: the write cannot be taken whole.
    const first = send(1, 'x'.repeat(512 * 1024));
    await turns();
    const queued = [send(2, 'small'), send(3, 'small too')];
    await expect(app.transport.send(echoRequest(4, 'y'.repeat(2048)))).rejects.toBeInstanceOf(SendQueueFullError);
    await turns();
    expect(settled).toEqual([]);
    expect(writes()).toBe(1);
    const answers = messages(app, 3);
    process.kill(pid, 'SIGUSR2');
    await Promise.all([first, ...queued]);
    expect(settled).toEqual([1, 2, 3]);
    expect(writes()).toBe(2);
    expect((await answers).map((message) => 'id' in message && message.id)).toEqual([1, 2, 3]);
  });

  it('writes what was sent before close, and refuses sends after it', async () => {
    const app = open(`let got = ''; process.stdin.on('data', (c) => (got += c)); process.stdin.on('end', () => { process.stderr.write(got); process.exit(0); });`);
    await app.transport.start();
    groups.push(await app.spawned);
    const sent = [app.transport.send(echoRequest(1, 'a')), app.transport.send(echoRequest(2, 'b'))];
    await app.transport.close();
    await Promise.all(sent);
    const lines = (await onStderr(app, (text) => text.split('\n').length > 2)).trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).id)).toEqual([1, 2]);
    await expect(app.transport.send(echoRequest(3, 'c'))).rejects.toSatisfy(
      (error) => error instanceof SdkError && error.code === SdkErrorCode.NotConnected,
    );
  });

  it('runs the app in a process group of its own, skips junk lines, and hands over stderr from the first line', async () => {
    const app = open(ECHO_APP);
    await app.transport.start();
    const pid = await app.spawned;
    groups.push(pid);
    expect(app.transport.pid).toBe(pid);
    const answer = nextMessage(app);
    await app.transport.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: { text: 'héllo' } });
    expect(await answer).toEqual({ jsonrpc: '2.0', id: 1, result: { pgid: pid, text: 'héllo' } });
    expect(app.errors).toEqual([]);
    expect(await onStderr(app, (text) => text.includes('\n'))).toBe('starting\n');
  });

  it('drops a message over maxMessageBytes, says why, and closes the app', async () => {
    const app = open(ECHO_APP, { maxMessageBytes: 64 * 1024 });
    await app.transport.start();
    const pid = await app.spawned;
    groups.push(pid);
    await app.transport.send({ jsonrpc: '2.0', id: 1, method: 'big', params: { bytes: 200 * 1024 } });
    await app.closed;
    expect(app.errors[0]).toBeInstanceOf(MessageTooLargeError);
    expect(app.received).toEqual([]);
    expect(isAlive(pid)).toBe(false);
    expect(app.transport.pid).toBeNull();
  });

  it('close ends stdin, then sends SIGTERM, then SIGKILL to an app that ignores both', async () => {
    const { app, pid } = await startApp(STUBBORN_APP, { closeStepMs: 200 });
    await onStderr(app, (text) => text.includes('ready'));
    await app.transport.close();
    expect(isAlive(pid)).toBe(false);
    await onStderr(app, (text) => text.includes('SIGTERM ignored'));
    await app.closed;
    await expect(app.transport.send({ jsonrpc: '2.0', method: 'late' })).rejects.toSatisfy(
      (error) => error instanceof SdkError && error.code === SdkErrorCode.NotConnected,
    );
  });

  it('close returns once the app exits, even while a grandchild holds its pipes; the group signal ends the rest', async () => {
    // A step of 10 minutes: waiting for the pipes instead of the exit would time the test out.
    const app = open(PARENT_APP, { closeStepMs: 600_000 });
    await app.transport.start();
    const pid = await app.spawned;
    groups.push(pid);
    const grandchild = Number((await onStderr(app, (text) => /grandchild \d+\n/.test(text))).match(/grandchild (\d+)/)![1]);
    await app.transport.close();
    expect(isAlive(pid)).toBe(false);
    expect(isAlive(grandchild)).toBe(true);
    expect(signalGroup(pid, 'SIGKILL')).toBe(true);
    await app.closed; // the pipes close with the grandchild
    // The kernel closes a killed process's files before it becomes a zombie: wait for the second event too.
    await expect.poll(() => isAlive(grandchild)).toBe(false);
  });

  it('refuses a second start', async () => {
    const app = open(ECHO_APP);
    await app.transport.start();
    groups.push(await app.spawned);
    await expect(app.transport.start()).rejects.toThrow('already started');
  });
});
