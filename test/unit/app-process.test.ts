import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultAppEnvironment, EarlyAppProcess, EarlyApps, spawnApp } from '../../src/apps/app-process.js';
import { isAlive, signalGroup } from '../../src/apps/process-tree.js';
import { AppRegistry } from '../../src/apps/registry.js';
import { AppStdioTransport } from '../../src/apps/stdio-transport.js';
import type { RunnerConfig } from '../../src/config/types.js';
import { faultyArgs } from '../helpers/workspace.js';

// App processes started before anyone talks to them (a run starts its apps before it loads the SDK),
// then adopted by the stdio transport: whatever the process did meanwhile must reach the transport.

const groups: number[] = [];
afterEach(() => {
  for (const pid of groups.splice(0)) signalGroup(pid, 'SIGKILL');
});

function early(script: string): EarlyAppProcess {
  const process = new EarlyAppProcess(spawnApp({ command: globalThis.process.execPath, args: ['-e', script] }));
  if (process.child.pid) groups.push(process.child.pid);
  return process;
}

function adopt(process: EarlyAppProcess) {
  const transport = new AppStdioTransport({ command: 'unused', early: process, maxMessageBytes: 1024 * 1024 });
  const received: JSONRPCMessage[] = [];
  let stderr = '';
  transport.onmessage = (message) => received.push(message);
  transport.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  const spawned = new Promise<number>((resolve) => (transport.onspawn = resolve));
  return { transport, received, closed, spawned, stderr: () => stderr };
}

describe('app processes started early', () => {
  it('inherit the same variables as the SDK gives a stdio server', () => {
    expect(defaultAppEnvironment()).toEqual(getDefaultEnvironment());
  });

  it('lose nothing they wrote before they were adopted, and are the transport’s from then on', async () => {
    const process = early(`
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/early' }) + '\\n');
      process.stderr.write('said early\\n');
      process.stdin.on('data', (chunk) => process.stdout.write(chunk));
      process.stdin.on('end', () => process.exit(0));
    `);
    await once(process.child, 'spawn');
    // Both lines are written before the transport exists: they wait in the pipes.
    await new Promise((resolve) => process.child.stderr!.once('readable', resolve));
    const app = adopt(process);
    await app.transport.start();
    expect(await app.spawned).toBe(process.child.pid);
    await app.transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await new Promise<void>((resolve) => {
      const check = () => (app.received.length === 2 ? resolve() : setImmediate(check));
      check();
    });
    expect(app.received).toEqual([
      { jsonrpc: '2.0', method: 'notifications/early' },
      { jsonrpc: '2.0', id: 1, method: 'ping' },
    ]);
    expect(app.stderr()).toContain('said early\n');
    await app.transport.close();
    await app.closed;
    expect(isAlive(process.child.pid!)).toBe(false);
  });

  it('that exited before they were adopted: start resolves, its stderr is there, and the transport closes', async () => {
    const process = early(`process.stderr.write('boom at startup\\n'); process.exit(1);`);
    await once(process.child, 'close');
    expect(process.closed).toBe(true);
    const app = adopt(process);
    await app.transport.start();
    await app.closed;
    expect(app.stderr()).toBe('boom at startup\n');
  });

  it('that could not be spawned: start fails with the spawn error', async () => {
    const process = new EarlyAppProcess(spawnApp({ command: join(tmpdir(), 'no-such-app-here') }));
    await once(process.child, 'error');
    const app = adopt(process);
    await expect(app.transport.start()).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('EarlyApps', () => {
  const config = (artifacts: string, pidFile: string): RunnerConfig =>
    ({
      artifacts,
      secretValues: [],
      secretEntries: [],
      apps: {
        faulty: { name: 'faulty', transport: 'stdio', command: globalThis.process.execPath, args: [...faultyArgs, '--pid-file', pidFile], env: {}, cwd: artifacts, roots: false },
        web: { name: 'web', transport: 'http', url: 'http://127.0.0.1:9/mcp', headers: {}, roots: false },
      },
    }) as unknown as RunnerConfig;

  it('starts the stdio apps named, once each; the first connection adopts its process, and closing ends it', async () => {
    const artifacts = mkdtempSync(join(tmpdir(), 'runner-early-'));
    const pidFile = join(artifacts, 'pids');
    const settings = config(artifacts, pidFile);
    const apps = EarlyApps.start(settings, ['faulty', 'faulty', 'web', 'missing']);
    const registry = new AppRegistry({ config: settings, early: apps, verdictFile: null });
    const connection = await registry.get('faulty');
    const pids = readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number);
    // One process: the one started early, now connected.
    expect(pids).toHaveLength(1);
    expect(connection.alive).toBe(true);
    expect(apps.take('faulty')).toBeUndefined();
    await registry.closeAll();
    expect(isAlive(pids[0]!)).toBe(false);
  });

  it('ends the processes nobody adopted when the registry closes', async () => {
    const artifacts = mkdtempSync(join(tmpdir(), 'runner-early-'));
    const pidFile = join(artifacts, 'pids');
    const settings = config(artifacts, pidFile);
    const registry = new AppRegistry({ config: settings, early: EarlyApps.start(settings, ['faulty']), verdictFile: null });
    const pid = async () => Number((existsSync(pidFile) ? readFileSync(pidFile, 'utf8') : '').trim());
    await expect.poll(pid, { timeout: 10_000 }).toBeGreaterThan(0);
    const started = await pid();
    await registry.closeAll();
    await expect.poll(() => isAlive(started), { timeout: 10_000 }).toBe(false);
  });
});
