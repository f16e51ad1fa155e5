import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { killListedPids, linesOf } from '../helpers/pid-files.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { cliPath, createWorkspace, type Workspace, faultyArgs } from '../helpers/workspace.js';

// Queue mode end to end: a real redis-server, `runner worker` processes, `runner run --queue`.
// Each worker's faulty app appends to its own counter file (COUNTER differs per worker), so the files
// say which worker ran what; the lines themselves are written inside the app.
// The tests run concurrently (they mostly wait: on a lock to expire, a timeout, a slow call): each group
// of them has apps of its own, so no worker takes another group's jobs, and the killed worker's test its own Redis.

interface WorkerProcess {
  child: ChildProcess;
  /** The counter file of this worker's app `name`. */
  counter(app: string): string;
  stderr(): string;
}

let redis: RedisServer;
let ws: Workspace;

function startWorker(index: number, config: string, options: { env?: NodeJS.ProcessEnv; queue?: string } = {}): Promise<WorkerProcess> {
  const counter = join(ws.dir, `worker-${index}`);
  const child = spawn(process.execPath, [cliPath, '--config', config, 'worker', '--queue', options.queue ?? redis.url], {
    cwd: ws.dir,
    env: { ...process.env, COUNTER: counter, ...options.env },
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

function startWorkers(indexes: number[], config: string, options: { env?: NodeJS.ProcessEnv; queue?: string } = {}): Promise<WorkerProcess[]> {
  return Promise.all(indexes.map((index) => startWorker(index, config, options)));
}

async function stopWorkers(list: WorkerProcess[]): Promise<void> {
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
}

/** Writes config `name`: `concurrency` calls at a time per process, and faulty apps by name with their extra YAML. */
function writeConfig(name: string, concurrency: number, apps: Record<string, string>): string {
  // Each app counts into `$COUNTER.<app>.txt`: COUNTER names the worker; a coordinator has none.
  const args = (app: string) => [...faultyArgs, '--counter', `\${COUNTER:-${join(ws.dir, 'coordinator')}}.${app}.txt`, '--state', join(ws.dir, 'state'), '--pid-file', join(ws.dir, 'app-pids.txt')];
  const entries = Object.entries(apps).map(([app, extra]) => `  ${app}:\n    command: node\n    args: ${JSON.stringify(args(app))}\n${extra}`);
  return ws.write(name, `artifacts: artifacts\nconcurrency: ${concurrency}\napps:\n${entries.join('')}`);
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
}, 30_000);

afterAll(async () => {
  killListedPids(join(ws.dir, 'app-pids.txt'));
  await redis?.stop();
}, 30_000);

describe.concurrent('queue mode (BullMQ on Redis)', () => {
  /** One call at a time per worker, so the limited app's two slots need two workers. Two apps on the same
   * fixture: `limited` with a concurrency of 2 across the cluster, `wide` with none. */
  const fanConfig = () => writeConfig('fan.config.yaml', 1, { limited: '    concurrency: 2\n', wide: '' });

  // BullMQ hands a worker that finishes a job the next one at once, so an app limited to 2 in flight
  // keeps (at most) two workers busy: the spread is shown on an app without a limit, in the same run.
  it('spreads a 90-item foreach over three workers, and an app concurrency of 2 holds across them', async ({ expect }) => {
    const config = fanConfig();
    const workers = await startWorkers([1, 2, 3], config);
    try {
      const delayMs = 40;
      const items = (n: number) => JSON.stringify([...Array(n).keys()]);
      const workflow = ws.write(
        'fan.yaml',
        `name: fan\nsteps:\n  - id: wide\n    uses: wide.concurrent\n    foreach: ${items(90)}\n    with: { delayMs: ${delayMs} }\n` +
          `  - id: limited\n    uses: limited.concurrent\n    foreach: ${items(40)}\n    with: { delayMs: ${delayMs} }\n`,
      );
      const result = await runInProcess(['--config', config, 'run', workflow, '--json', '--queue', redis.url], { cwd: ws.dir });
      expect(result.stderr).not.toMatch(/internal error/);
      const record = JSON.parse(result.stdout);
      expect(result.code).toBe(0);
      const step = (id: string) => record.steps.find((entry: { id: string }) => entry.id === id);
      expect(step('wide').items).toHaveLength(90);
      expect(step('wide').items.every((item: { status: string }) => item.status === 'succeeded')).toBe(true);
      expect(step('limited').items).toHaveLength(40);

      const wide = workers.map((worker) => linesOf(worker.counter('wide')));
      expect(wide.reduce((sum, lines) => sum + lines.length, 0)).toBe(90);
      // Every worker took part: the calls were spread, not run by the first one to connect.
      for (const lines of wide) expect(lines.length).toBeGreaterThan(0);
      // The coordinator itself executed no call.
      expect(linesOf(join(ws.dir, 'coordinator.wide.txt'))).toHaveLength(0);
      expect(linesOf(join(ws.dir, 'coordinator.limited.txt'))).toHaveLength(0);

      const limited = workers.map((worker) => linesOf(worker.counter('limited')));
      expect(limited.reduce((sum, lines) => sum + lines.length, 0)).toBe(40);
      // More than one worker ran the limited app, so the limit held across processes, not inside one.
      expect(limited.filter((lines) => lines.length > 0).length).toBeGreaterThan(1);
      // Each call was in flight for at least delayMs from its start: more than 2 overlapping would break the app's limit.
      const starts = limited.flat().map((line) => Number(line.split(' ')[1]));
      expect(peakOverlap(starts, delayMs)).toBeLessThanOrEqual(2);

      // The run store is shared through Redis: another "machine" (another folder, its own artifacts) sees the run.
      const elsewhere = createWorkspace(`queue: ${redis.url}\n`);
      const listed = await runInProcess(['--config', elsewhere.config, 'runs', '--json'], { cwd: elsewhere.dir });
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout).map((run: { id: string }) => run.id)).toContain(record.id);
      const shown = await runInProcess(['--config', elsewhere.config, 'runs', 'show', record.id, '--json'], { cwd: elsewhere.dir });
      expect(JSON.parse(shown.stdout).steps.map((entry: { status: string }) => entry.status)).toEqual(['succeeded', 'succeeded']);
    } finally {
      await stopWorkers(workers);
    }
  }, 90_000);

  it('a worker killed mid-call: the read-only call runs again elsewhere, the one with side effects is reported unknown, never sent twice', async ({ expect }) => {
    // A short lock, so the surviving worker takes back the killed one's jobs within seconds. Its own Redis:
    // BullMQ spaces a queue's stalled-job checks by a key that lives as long as the last checker's lock, and
    // the other test's workers on `wide` (30 s lock) would hold off these workers' check for up to 30 s.
    const own = await startRedisServer();
    const config = fanConfig();
    const workers = await startWorkers([4, 5, 6], config, { env: { RUNNER_WORKER_LOCK_MS: '2000' }, queue: own.url });
    try {
      // Both calls wait for a gate the test opens once their workers are dead: the survivor's run of the
      // read-only call then answers at once.
      const gate = join(ws.dir, 'kill.gate');
      const workflow = ws.write(
        'kill.yaml',
        `name: kill\nsteps:\n  - id: read\n    uses: wide.concurrent\n    with: { delayMs: 0, gate: ${JSON.stringify(gate)} }\n` +
          `  - id: write\n    uses: wide.work\n    with: { label: side-effect, gate: ${JSON.stringify(gate)} }\n`,
      );
      const running = runInProcess(['--config', config, 'run', workflow, '--json', '--queue', own.url], { cwd: ws.dir });
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
      // Dead before the gate opens: a killed worker must not get to report its call.
      await Promise.all(killed.map(({ child }) => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGKILL')))));
      writeFileSync(gate, '');
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
    } finally {
      await stopWorkers(workers);
      await own.stop();
    }
  }, 90_000);

  // One worker for the tests that need no more: each start is a Node process and a Redis connection.
  // Each test has an app of its own, and the worker takes a call of each at once.
  describe('with one worker', () => {
    let worker: WorkerProcess;
    let config: string;
    beforeAll(async () => {
      config = writeConfig('single.config.yaml', 3, { chatty: '', hangs: '', gated: '' });
      worker = await startWorker(7, config);
    }, 30_000);
    afterAll(() => stopWorkers([worker]), 30_000);

    it("forwards a call's progress from the worker to the coordinator's progress view, a few updates a second at most", async ({ expect }) => {
      // A chatty app: a progress notification every 5 ms for 3 s, some 600 in all.
      const workflow = ws.write('chatty.yaml', 'name: chatty\nsteps:\n  - id: chatty\n    uses: chatty.slow\n    with: { ms: 3000, progressEveryMs: 5 }\n');
      const result = await runInProcess(['--config', config, 'run', workflow, '--queue', redis.url], { cwd: ws.dir });
      expect(result.code).toBe(0);
      // The line log prints a call's progress as the in-process path does: `… <step> <progress>/<total> (<n>%) <message>`.
      expect(result.stderr).toMatch(/^… chatty \d+\/3000 \(\d+%\) \d+ of 3000 ms$/m);
      // What reached Redis: BullMQ's event stream of the app's queue holds one `progress` entry per update.
      const client = new Redis(redis.url);
      try {
        const entries = (await client.xrange(`runner:chatty:events`, '-', '+')) as [string, string[]][];
        const updates = entries.filter(([, fields]) => fields[fields.indexOf('event') + 1] === 'progress');
        expect(updates.length).toBeGreaterThan(2);
        // At most 4 a second over the 3 s call, and a margin for the first one and the timing of the last.
        expect(updates.length).toBeLessThanOrEqual(16);
      } finally {
        client.disconnect();
      }
    }, 60_000);

    it('a run timeout cancels the call on the worker, which cancels it at the app', async ({ expect }) => {
      // A run of its own starts the app on the worker first, so the run's timeout falls while the call is in flight
      // (a worker keeps its apps between jobs), not while the app starts.
      const warm = ws.write('warm.yaml', 'name: warm\nsteps:\n  - id: warm\n    uses: hangs.echo\n    with: { text: warm }\n');
      expect((await runInProcess(['--config', config, 'run', warm, '--queue', redis.url], { cwd: ws.dir })).code).toBe(0);
      const workflow = ws.write('hang.yaml', 'name: hang\ntimeout: 3s\nsteps:\n  - id: wait\n    uses: hangs.hang\n');
      const result = await runInProcess(['--config', config, 'run', workflow, '--json', '--queue', redis.url], { cwd: ws.dir });
      const record = JSON.parse(result.stdout);
      expect(result.code).toBe(1);
      expect(record.steps[0]).toMatchObject({ id: 'wait', status: 'failed', error: { kind: 'timeout' } });
      // The app saw notifications/cancelled: its hang tool notes that in the worker's counter file.
      await expect.poll(() => linesOf(worker.counter('hangs')), { timeout: 10_000 }).toContain('hang cancelled');
    }, 60_000);

    it('an approval that waits: nothing is dispatched while it waits; approved from any machine, the resume has a worker run it once', async ({ expect }) => {
      // Its own config beside the worker's: same apps, the run store in Redis, and asks that wait.
      const approvals = ws.write('approvals.config.yaml', `${readFileSync(config, 'utf8')}queue: ${redis.url}\npolicy: { headless-ask: wait }\n`);
      const workflow = ws.write('gate.yaml', 'name: gate\nsteps:\n  - id: purge\n    uses: gated.purge\n    with: { label: queued }\n  - id: read\n    uses: gated.echo\n    with: { text: hi }\n');
      const first = await runInProcess(['--config', approvals, 'run', workflow, '--json'], { cwd: ws.dir });
      expect(first.code).toBe(1);
      const record = JSON.parse(first.stdout);
      expect(record.steps.map((entry: { status: string }) => entry.status)).toEqual(['waiting', 'succeeded']);
      expect(linesOf(worker.counter('gated'))).not.toContain('purge queued');

      const elsewhere = createWorkspace(`queue: ${redis.url}\n`);
      const approved = await runInProcess(['--config', elsewhere.config, 'approve', record.id, 'purge'], { cwd: elsewhere.dir, env: { RUNNER_USER: 'ana' } });
      expect(approved.code).toBe(0);
      const resumed = await runInProcess(['--config', approvals, 'resume', record.id, '--json'], { cwd: ws.dir });
      expect(resumed.code).toBe(0);
      expect(JSON.parse(resumed.stdout).steps[0]).toMatchObject({ status: 'succeeded', approval: { decision: 'approved', by: 'ana' } });
      expect(linesOf(worker.counter('gated')).filter((line) => line === 'purge queued')).toHaveLength(1);
      expect(linesOf(join(ws.dir, 'coordinator.gated.txt'))).not.toContain('purge queued');
    }, 90_000);
  });
});
