import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { killListedPids, linesOf } from '../helpers/pid-files.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { cliPath, createWorkspace, type Workspace, faultyArgs } from '../helpers/workspace.js';

// Queue mode riding through failures of the parts around a run: Redis restarting mid-call, and the
// coordinator killed mid-run and resumed from another folder (another "machine"). Real processes throughout.

// AOF with a sync before every reply: what docs/run-store-redis.md asks of a Redis that keeps the run store.
const PERSISTENT = ['--appendonly', 'yes', '--appendfsync', 'always'];

let redis: RedisServer;
let ws: Workspace;
let children: ChildProcess[] = [];

/** Polls `probe` until it gives a value; on a timeout the error says what was awaited and, from `state`, what was seen. */
async function waitFor<T>(probe: () => T | undefined, what: string, state: () => string = () => '', timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${state() ? `; seen:\n${state()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts a process of the real CLI; its stdout and stderr are collected. */
function spawnCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [cliPath, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function startWorker(dir: string, config: string) {
  const worker = spawnCli(['--config', config, 'worker', '--queue', redis.url], dir);
  await waitFor(() => (worker.stderr().includes(' ready: ') ? true : undefined), 'the worker to be ready');
  return worker;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('close', () => (clearTimeout(timer), resolve()));
    child.kill('SIGTERM');
  });
}

/** Where a gate file of the faulty app's `gate` and `work` tools goes: the call waits until it exists. */
function gatePath(name: string): string {
  return join(ws.dir, `${name}.gate`);
}

function openGate(path: string): void {
  writeFileSync(path, '');
}

/** A config whose app `faulty` appends each side effect to `counter` (the same file from every folder). */
function configFor(counter: string): string {
  const args = [...faultyArgs, '--counter', counter, '--pid-file', join(ws.dir, 'app-pids.txt')];
  return `artifacts: artifacts\nconcurrency: 4\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(args)}\n`;
}

beforeAll(async () => {
  redis = await startRedisServer({ args: PERSISTENT });
  ws = createWorkspace('');
}, 30_000);

afterEach(async () => {
  await Promise.all(children.map(stopChild));
  children = [];
}, 30_000);

afterAll(async () => {
  killListedPids(join(ws.dir, 'app-pids.txt'));
  await redis?.stop();
}, 30_000);

describe('queue mode recovery', () => {
  it('rides through a Redis restart mid-call: the run completes and no side effect happens twice', async () => {
    const counter = join(ws.dir, 'restart-counter.txt');
    ws.write('runner.config.yaml', configFor(counter));
    await startWorker(ws.dir, ws.config);
    const [slowGate, readGate] = [gatePath('restart-slow'), gatePath('restart-read')];
    const workflow = ws.write(
      'restart.yaml',
      'name: restart\nsteps:\n' +
        '  - id: first\n    uses: faulty.work\n    with: { label: first }\n' +
        `  - id: slow\n    needs: first\n    uses: faulty.work\n    with: { label: slow, gate: ${JSON.stringify(slowGate)} }\n` +
        `  - id: read\n    needs: first\n    uses: faulty.gate\n    with: { path: ${JSON.stringify(readGate)} }\n` +
        '  - id: last\n    needs: [slow, read]\n    uses: faulty.work\n    with: { label: last }\n',
    );
    const run = spawnCli(['--config', ws.config, 'run', workflow, '--json', '--queue', redis.url], ws.dir);
    // `slow` reached the app (its side effect is written first) and waits for its gate. Redis goes away while
    // it is in flight; the gates open while Redis is down, and Redis comes back once the app has let `slow`
    // through, so the worker finishes the call while Redis is down and reports it after the restart.
    await waitFor(() => (linesOf(counter).includes('slow') ? true : undefined), 'the slow call to reach the app');
    await redis.stop('SIGTERM');
    openGate(slowGate);
    openGate(readGate);
    await waitFor(() => (existsSync(`${slowGate}.passed`) ? true : undefined), 'the app to let the slow call through');
    redis = await startRedisServer({ dir: redis.dir, port: redis.port, args: PERSISTENT });

    const { code } = await run.exited;
    expect(run.stderr()).not.toMatch(/internal error/);
    // The reconnect attempts are not printed over the progress view (BullMQ prints each one when nobody listens).
    expect(run.stderr()).not.toMatch(/ECONNREFUSED/);
    const record = JSON.parse(run.stdout());
    expect(code).toBe(0);
    expect(record.steps.map((step: { id: string; status: string }) => [step.id, step.status])).toEqual([
      ['first', 'succeeded'],
      ['slow', 'succeeded'],
      ['read', 'succeeded'],
      ['last', 'succeeded'],
    ]);
    // Each call with side effects reached the app exactly once, by the app's own count.
    expect(linesOf(counter).sort()).toEqual(['first', 'last', 'slow']);
    // The run store kept the run across the restart.
    const listed = await runInProcess(['--config', ws.config, 'runs', 'show', record.id, '--json'], { cwd: ws.dir, env: { RUNNER_QUEUE_URL: redis.url } });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ id: record.id, status: 'succeeded' });
  }, 90_000);

  it('a coordinator killed mid-run is resumed from another folder without repeating what succeeded or what was in flight', async () => {
    const counter = join(ws.dir, 'resume-counter.txt');
    const first = createWorkspace('');
    const second = createWorkspace('');
    // The same config in both folders, and one artifacts folder for both (NFS between machines).
    const shared = join(ws.dir, 'shared-artifacts');
    mkdirSync(shared, { recursive: true });
    const config = configFor(counter).replace('artifacts: artifacts', `artifacts: ${JSON.stringify(shared)}\nqueue: ${redis.url}`);
    first.write('runner.config.yaml', config);
    second.write('runner.config.yaml', config);
    // `read` and `two` wait for one gate, opened once the coordinator is dead.
    const gate = gatePath('handover');
    const workflow = first.write(
      'workflows/handover.yaml',
      'name: handover\nsteps:\n' +
        '  - id: one\n    uses: faulty.work\n    with: { label: one }\n' +
        `  - id: read\n    needs: one\n    uses: faulty.gate\n    with: { path: ${JSON.stringify(gate)} }\n` +
        `  - id: two\n    needs: one\n    uses: faulty.work\n    with: { label: two, gate: ${JSON.stringify(gate)} }\n` +
        '  - id: three\n    needs: [read, two]\n    uses: faulty.work\n    with: { label: three }\n',
    );
    cpSync(join(first.dir, 'workflows'), join(second.dir, 'workflows'), { recursive: true });
    await startWorker(ws.dir, first.config);

    const run = spawnCli(['--config', first.config, 'run', workflow, '--json'], first.dir);
    // The coordinator's own progress lines say when `one` succeeded and `read` and `two` are in flight on the
    // worker; the app's counter, that two's side effect happened.
    const id = await waitFor(() => /^run (\S+) handover started/m.exec(run.stderr())?.[1], 'the run to start');
    await waitFor(
      () => (/^✔ one succeeded/m.test(run.stderr()) && /^▶ read running/m.test(run.stderr()) && linesOf(counter).includes('two') ? true : undefined),
      'one to succeed, and read and two to be in flight',
      () => `coordinator's stderr:\n${run.stderr()}\ncounter: ${JSON.stringify(linesOf(counter))}`,
    );
    run.child.kill('SIGKILL');
    await run.exited;
    // The worker finishes `two` now, with nobody waiting for it. Whether the resume below finds its job finished
    // or still running does not matter here: recover-calls.test.ts covers both.
    openGate(gate);

    const resumed = await runInProcess(['--config', second.config, 'resume', id, '--json'], { cwd: second.dir });
    expect(resumed.stderr).not.toMatch(/internal error/);
    expect(resumed.code).toBe(0);
    const record = JSON.parse(resumed.stdout);
    expect(record).toMatchObject({ id, status: 'succeeded' });
    expect(record.steps.map((step: { id: string; status: string }) => [step.id, step.status])).toEqual([
      ['one', 'succeeded'],
      ['read', 'succeeded'],
      ['two', 'succeeded'],
      ['three', 'succeeded'],
    ]);
    // `two` was not sent again: its outcome came from its job, which the worker finished after the coordinator died.
    expect(record.steps[2].outputs).toEqual({ count: 2 });
    expect(record.resumedAt).toHaveLength(1);
    // Each side effect happened once: `one` and `two` for the first coordinator, `three` after the resume.
    expect(linesOf(counter)).toEqual(['one', 'two', 'three']);
  }, 90_000);
});

describe('a worker asked to stop', () => {
  it('stops at once with Redis up (exit 0), and with Redis gone either at once or within its grace (exit 130, saying so)', async () => {
    const own = await startRedisServer();
    try {
      const dir = createWorkspace('');
      dir.write('runner.config.yaml', `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n`);
      const env = { RUNNER_WORKER_REDIS_GRACE_MS: '300' };
      const start = async () => {
        const worker = spawnCli(['--config', dir.config, 'worker', '--queue', own.url], dir.dir, env);
        await waitFor(() => (worker.stderr().includes(' ready: ') ? true : undefined), 'the worker to be ready', worker.stderr);
        return worker;
      };

      const up = await start();
      up.child.kill('SIGTERM');
      expect(await up.exited).toEqual({ code: 0, signal: null });
      expect(up.stderr()).not.toContain('Redis did not answer');

      // Redis goes away for good: BullMQ's own close may notice the lost connection at once (exit 0) or wait
      // for Redis to come back, which here is never: the grace then ends it (exit 130, saying so). Either way
      // it stops; without the grace it could wait forever.
      const down = await start();
      await own.stop();
      down.child.kill('SIGTERM');
      const { code, signal } = await down.exited;
      expect(signal).toBeNull();
      expect([0, 130]).toContain(code);
      expect(down.stderr()).toContain('SIGTERM: finishing calls in flight');
      expect(down.stderr().includes('worker: Redis did not answer within 300ms while stopping: stopping without it.')).toBe(code === 130);
    } finally {
      await own.stop();
    }
  }, 60_000);
});
