import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { killListedPids, linesOf } from '../helpers/pid-files.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { cliPath, createWorkspace, faultyApp, type Workspace } from '../helpers/workspace.js';

// Queue mode end to end: a real redis-server, three `runner worker` processes, `runner run --queue`.
// Each worker's faulty app appends to its own counter file (COUNTER differs per worker), so the files
// say which worker ran what; the lines themselves are written inside the app.

interface WorkerProcess {
  child: ChildProcess;
  /** The counter file of this worker's app `name`. */
  counter(app: string): string;
  stderr(): string;
}

let redis: RedisServer;
let ws: Workspace;
let workers: WorkerProcess[] = [];

function startWorker(index: number, env: NodeJS.ProcessEnv = {}, queue = redis.url): Promise<WorkerProcess> {
  const counter = join(ws.dir, `worker-${index}`);
  const child = spawn(process.execPath, [cliPath, '--config', ws.config, 'worker', '--queue', queue], {
    cwd: ws.dir,
    env: { ...process.env, COUNTER: counter, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes(' ready: ')) resolve({ child, counter: (app) => `${counter}.${app}.txt`, stderr: () => stderr });
    });
    child.once('exit', (code) => reject(new Error(`worker ${index} exited (${code}) before it was ready:\n${stderr}`)));
  });
}

async function stopWorkers(list = workers): Promise<void> {
  await Promise.all(
    list.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => (clearTimeout(timer), resolve()));
          child.kill('SIGTERM');
        }),
    ),
  );
  if (list === workers) workers = [];
}

/** The most calls in flight at once, from start times in ms and the least time each call surely took. */
function peakOverlap(starts: number[], durationMs: number): number {
  const edges = starts.flatMap((start) => [
    [start, 1],
    [start + durationMs, -1],
  ]);
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let current = 0;
  let peak = 0;
  for (const [, delta] of edges) peak = Math.max(peak, (current += delta!));
  return peak;
}

beforeAll(async () => {
  redis = await startRedisServer();
  ws = createWorkspace('');
  // One call at a time per worker, so the limited app's two slots need two workers.
  // Two apps on the same fixture: `limited` with a concurrency of 2 across the cluster, `wide` with none.
  const args = (app: string) => [faultyApp, '--counter', `\${COUNTER:-${join(ws.dir, 'coordinator')}}.${app}.txt`, '--state', join(ws.dir, 'state'), '--pid-file', join(ws.dir, 'app-pids.txt')];
  ws.write(
    'runner.config.yaml',
    `artifacts: artifacts\nconcurrency: 1\napps:\n  limited:\n    command: node\n    args: ${JSON.stringify(args('limited'))}\n    concurrency: 2\n  wide:\n    command: node\n    args: ${JSON.stringify(args('wide'))}\n`,
  );
}, 30_000);

afterEach(() => stopWorkers(), 30_000);

afterAll(async () => {
  killListedPids(join(ws.dir, 'app-pids.txt'));
  await redis?.stop();
}, 30_000);

describe('queue mode (BullMQ on Redis)', () => {
  // BullMQ hands a worker that finishes a job the next one at once, so an app limited to 2 in flight
  // keeps (at most) two workers busy: the spread is shown on an app without a limit, in the same run.
  it('spreads a 300-item foreach over three workers, and an app concurrency of 2 holds across them', async () => {
    workers = await Promise.all([1, 2, 3].map((index) => startWorker(index)));
    const delayMs = 40;
    const items = (n: number) => JSON.stringify([...Array(n).keys()]);
    const workflow = ws.write(
      'fan.yaml',
      `name: fan\nsteps:\n  - id: wide\n    uses: wide.concurrent\n    foreach: ${items(300)}\n    with: { delayMs: ${delayMs} }\n` +
        `  - id: limited\n    uses: limited.concurrent\n    foreach: ${items(60)}\n    with: { delayMs: ${delayMs} }\n`,
    );
    const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json', '--queue', redis.url], { cwd: ws.dir });
    expect(result.stderr).not.toMatch(/internal error/);
    const record = JSON.parse(result.stdout);
    expect(result.code).toBe(0);
    const step = (id: string) => record.steps.find((entry: { id: string }) => entry.id === id);
    expect(step('wide').items).toHaveLength(300);
    expect(step('wide').items.every((item: { status: string }) => item.status === 'succeeded')).toBe(true);
    expect(step('limited').items).toHaveLength(60);

    const wide = workers.map((worker) => linesOf(worker.counter('wide')));
    expect(wide.reduce((sum, lines) => sum + lines.length, 0)).toBe(300);
    // Every worker took part: the calls were spread, not run by the first one to connect.
    for (const lines of wide) expect(lines.length).toBeGreaterThan(0);
    // The coordinator itself executed no call.
    expect(linesOf(join(ws.dir, 'coordinator.wide.txt'))).toHaveLength(0);
    expect(linesOf(join(ws.dir, 'coordinator.limited.txt'))).toHaveLength(0);

    const limited = workers.map((worker) => linesOf(worker.counter('limited')));
    expect(limited.reduce((sum, lines) => sum + lines.length, 0)).toBe(60);
    // More than one worker ran the limited app, so the limit held across processes, not inside one.
    expect(limited.filter((lines) => lines.length > 0).length).toBeGreaterThan(1);
    // Each call was in flight for at least delayMs from its start: more than 2 overlapping would break the app's limit.
    const starts = limited.flat().map((line) => Number(line.split(' ')[1]));
    expect(peakOverlap(starts, delayMs)).toBeLessThanOrEqual(2);
    await stopWorkers();

    // The run store is shared through Redis: another "machine" (another folder, its own artifacts) sees the run.
    const elsewhere = createWorkspace(`queue: ${redis.url}\n`);
    const listed = await runInProcess(['--config', elsewhere.config, 'runs', '--json'], { cwd: elsewhere.dir });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((run: { id: string }) => run.id)).toContain(record.id);
    const shown = await runInProcess(['--config', elsewhere.config, 'runs', 'show', record.id, '--json'], { cwd: elsewhere.dir });
    expect(JSON.parse(shown.stdout).steps.map((entry: { status: string }) => entry.status)).toEqual(['succeeded', 'succeeded']);
  }, 90_000);

  it('a worker killed mid-call: the read-only call runs again elsewhere, the one with side effects is reported unknown, never sent twice', async () => {
    // A short lock, so the surviving worker takes back the killed one's jobs within seconds. Its own Redis:
    // BullMQ spaces a queue's stalled-job checks by a key that lives as long as the last checker's lock, and
    // the other tests' workers (30 s lock) would hold off these workers' check for up to 30 s.
    const own = await startRedisServer();
    try {
      await killedMidCall(own.url);
    } finally {
      await stopWorkers();
      await own.stop();
    }
  }, 90_000);

  async function killedMidCall(queue: string): Promise<void> {
    workers = await Promise.all([4, 5, 6].map((index) => startWorker(index, { RUNNER_WORKER_LOCK_MS: '3000' }, queue)));
    const workflow = ws.write(
      'kill.yaml',
      'name: kill\nsteps:\n  - id: read\n    uses: wide.concurrent\n    with: { delayMs: 4000 }\n  - id: write\n    uses: wide.work\n    with: { delayMs: 4000, label: side-effect }\n',
    );
    const running = runInProcess(['--config', ws.config, 'run', workflow, '--json', '--queue', queue], { cwd: ws.dir });
    // Wait until both calls reached the app, then kill every worker that holds one.
    const holders = async (): Promise<WorkerProcess[]> => {
      for (;;) {
        const holding = workers.filter((worker) => linesOf(worker.counter('wide')).length > 0);
        const lines = holding.flatMap((worker) => linesOf(worker.counter('wide')));
        if (lines.some((line) => line.startsWith('start ')) && lines.includes('side-effect')) return holding;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const killed = await holders();
    for (const worker of killed) worker.child.kill('SIGKILL');
    const survivors = workers.filter((worker) => !killed.includes(worker));
    expect(survivors.length).toBeGreaterThan(0);

    const result = await running;
    const record = JSON.parse(result.stdout);
    const step = (id: string) => record.steps.find((entry: { id: string }) => entry.id === id);
    expect(result.code).toBe(1);
    expect(step('read').status).toBe('succeeded');
    expect(step('write')).toMatchObject({ status: 'failed', error: { outcome: 'unknown' } });
    const all = workers.flatMap((worker) => linesOf(worker.counter('wide')));
    // The read-only call ran twice (once on the killed worker, once on a survivor); the write, exactly once.
    expect(all.filter((line) => line.startsWith('start '))).toHaveLength(2);
    expect(survivors.flatMap((worker) => linesOf(worker.counter('wide'))).filter((line) => line.startsWith('start '))).toHaveLength(1);
    expect(all.filter((line) => line === 'side-effect')).toHaveLength(1);
  }

  // One worker for the tests that need no more: each start is a Node process and a Redis connection.
  describe('with one worker', () => {
    let worker: WorkerProcess;
    beforeAll(async () => void (worker = await startWorker(7)), 30_000);
    afterAll(() => stopWorkers([worker]), 30_000);

    it("forwards a call's progress from the worker to the coordinator's progress view, a few updates a second at most", async () => {
      // A chatty app: a progress notification every 5 ms for 3 s, some 600 in all.
      const workflow = ws.write('chatty.yaml', 'name: chatty\nsteps:\n  - id: chatty\n    uses: wide.slow\n    with: { ms: 3000, progressEveryMs: 5 }\n');
      const result = await runInProcess(['--config', ws.config, 'run', workflow, '--queue', redis.url], { cwd: ws.dir });
      expect(result.code).toBe(0);
      // The line log prints a call's progress as the in-process path does: `… <step> <progress>/<total> (<n>%) <message>`.
      expect(result.stderr).toMatch(/^… chatty \d+\/3000 \(\d+%\) \d+ of 3000 ms$/m);
      // What reached Redis: BullMQ's event stream of the app's queue holds one `progress` entry per update.
      const client = new Redis(redis.url);
      try {
        const entries = (await client.xrange(`runner:wide:events`, '-', '+')) as [string, string[]][];
        const updates = entries.filter(([, fields]) => fields[fields.indexOf('event') + 1] === 'progress');
        expect(updates.length).toBeGreaterThan(2);
        // At most 4 a second over the 3 s call, and a margin for the first one and the timing of the last.
        expect(updates.length).toBeLessThanOrEqual(16);
      } finally {
        client.disconnect();
      }
    }, 60_000);

    it('a run timeout cancels the call on the worker, which cancels it at the app', async () => {
      // `warm` starts the app on the worker first, so the run's timeout falls while the call is in flight.
      const workflow = ws.write(
        'hang.yaml',
        'name: hang\ntimeout: 12s\nsteps:\n  - id: warm\n    uses: wide.echo\n    with: { text: warm }\n  - id: wait\n    needs: warm\n    uses: wide.hang\n',
      );
      const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json', '--queue', redis.url], { cwd: ws.dir });
      const record = JSON.parse(result.stdout);
      expect(result.code).toBe(1);
      expect(record.steps[1]).toMatchObject({ id: 'wait', status: 'failed', error: { kind: 'timeout' } });
      // The app saw notifications/cancelled: its hang tool notes that in the worker's counter file.
      await expect.poll(() => linesOf(worker.counter('wide')), { timeout: 10_000 }).toContain('hang cancelled');
    }, 60_000);

    it('an approval that waits: nothing is dispatched while it waits; approved from any machine, the resume has a worker run it once', async () => {
      // Its own config beside the shared one: same apps, the run store in Redis, and asks that wait.
      const config = ws.write('approvals.config.yaml', `${readFileSync(ws.config, 'utf8')}queue: ${redis.url}\npolicy: { headless-ask: wait }\n`);
      const workflow = ws.write('gate.yaml', 'name: gate\nsteps:\n  - id: purge\n    uses: wide.purge\n    with: { label: queued }\n  - id: read\n    uses: wide.echo\n    with: { text: hi }\n');
      const first = await runInProcess(['--config', config, 'run', workflow, '--json'], { cwd: ws.dir });
      expect(first.code).toBe(1);
      const record = JSON.parse(first.stdout);
      expect(record.steps.map((entry: { status: string }) => entry.status)).toEqual(['waiting', 'succeeded']);
      expect(linesOf(worker.counter('wide'))).not.toContain('purge queued');

      const elsewhere = createWorkspace(`queue: ${redis.url}\n`);
      const approved = await runInProcess(['--config', elsewhere.config, 'approve', record.id, 'purge'], { cwd: elsewhere.dir, env: { RUNNER_USER: 'ana' } });
      expect(approved.code).toBe(0);
      const resumed = await runInProcess(['--config', config, 'resume', record.id, '--json'], { cwd: ws.dir });
      expect(resumed.code).toBe(0);
      expect(JSON.parse(resumed.stdout).steps[0]).toMatchObject({ status: 'succeeded', approval: { decision: 'approved', by: 'ana' } });
      expect(linesOf(worker.counter('wide')).filter((line) => line === 'purge queued')).toHaveLength(1);
      expect(linesOf(join(ws.dir, 'coordinator.wide.txt'))).not.toContain('purge queued');
    }, 90_000);
  });
});
