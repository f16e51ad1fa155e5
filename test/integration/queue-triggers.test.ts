import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { occurrenceJobId } from '../../src/triggers/handoff.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startServe, type Event, type Serve } from '../helpers/serve.js';
import { faultyWorkspace } from '../helpers/faulty-workspace.js';
import { cliPath, type Workspace } from '../helpers/workspace.js';

// Queue mode's triggers end to end: a real redis-server, two `runner serve --queue` processes on one
// artifacts folder and one `runner worker`. Every serve process sees every occurrence and every file;
// BullMQ keeps one job per firing and one process takes it. The faulty app's `work` tool appends one
// line per call to counter.txt, so side effects are counted too.

/** Occurrences of the per-second schedule both serve processes offer before one stops. */
const BOTH_RUNNING_OCCURRENCES = 3;

/** Occurrences the remaining serve process runs alone after the other stopped. */
const ALONE_OCCURRENCES = 1;

let redis: RedisServer;
let worker: ChildProcess | undefined;

const runs = (serves: Serve[]) => serves.flatMap((serve) => serve.events.filter((event) => event.type === 'trigger' && event.action === 'run'));
const finished = (serves: Serve[]) => serves.flatMap((serve) => serve.events.filter((event) => event.type === 'run-finished'));
const skipped = (serves: Serve[]) => serves.flatMap((serve) => serve.events.filter((event) => event.type === 'trigger' && event.action === 'skipped'));
const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
const runRecords = (artifacts: string, workflow: string) =>
  readdirSync(join(artifacts, workflow))
    .filter((name) => existsSync(join(artifacts, workflow, name, 'run.json')))
    .map((name) => JSON.parse(readFileSync(join(artifacts, workflow, name, 'run.json'), 'utf8')));

function startWorker(ws: Workspace): Promise<ChildProcess> {
  const child = spawn(process.execPath, [cliPath, '--config', ws.config, 'worker', '--queue', redis.url], { cwd: ws.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  worker = child;
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes(' ready: ')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`the worker exited (${code}) before it was ready:\n${stderr}`)));
  });
}

function stopWorker(): Promise<void> {
  const child = worker;
  worker = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => (clearTimeout(timer), resolve()));
    child.kill('SIGTERM');
  });
}

/** Two serve processes on the same workspace and queue, once both are ready. */
async function startTwoServes(ws: Workspace): Promise<Serve[]> {
  const serves = [startServe(ws, ['serve', '--queue', redis.url]), startServe(ws, ['serve', '--queue', redis.url])];
  await Promise.all(serves.map((serve, index) => serve.until((events) => events.some((event) => event.type === 'ready'), `serve ${index} ready`, 20_000)));
  return serves;
}

/** The job ids of the adds of an existing job id BullMQ saw on a queue: offers of a firing another process had offered first. */
async function duplicatedOffers(queue: string): Promise<string[]> {
  const client = new Redis(redis.url);
  try {
    const entries = await client.xrange(`runner:${queue}:events`, '-', '+');
    return entries.filter(([, fields]) => fields[0] === 'event' && fields[1] === 'duplicated').map(([, fields]) => fields[fields.indexOf('jobId') + 1]!);
  } finally {
    client.disconnect();
  }
}

/** The first occurrence of the one schedule every serve process has armed, read from their `ready` events (ms). */
function armedByAllFrom(serves: Serve[]): number {
  const scheduled = (serve: Serve) => serve.events.find((event) => event.type === 'ready')!.workflows.find((workflow: Event) => workflow.schedules);
  const nexts = serves.map((serve) => scheduled(serve).schedules[0].next as string);
  return Math.max(...nexts.map((next) => Date.parse(next)));
}

beforeAll(async () => {
  redis = await startRedisServer();
}, 30_000);

afterEach(stopWorker, 30_000);

afterAll(async () => {
  await redis?.stop();
}, 30_000);

describe('queue mode triggers: two serve processes, one worker', () => {
  // One test for both kinds of trigger: starting a worker and two serve processes is most of its cost, and
  // the files are dropped while the schedule runs. Each run's side effect is its own counter line: the
  // occurrence (`tick@…`) for the schedule, the file's path for the watched folder.
  it('a six-field schedule and a watched folder: each occurrence and each dropped file runs exactly once across both, none is missed', async () => {
    const ws = faultyWorkspace({
      'tick.yaml':
        'name: tick\non:\n  schedule:\n    - cron: "* * * * * *"\n      overlap: allow\nsteps:\n  - id: work\n    uses: faulty.work\n    with: { label: "${{ trigger.occurrence }}" }\n',
      'drop.yaml': 'name: drop\non:\n  watch:\n    paths: ["inbox/*.txt"]\n    debounce: 100ms\nsteps:\n  - id: work\n    uses: faulty.work\n    with: { label: "${{ trigger.source }}" }\n',
    });
    const inbox = join(ws.dir, 'inbox');
    mkdirSync(inbox);
    await startWorker(ws);
    const serves = await startTwoServes(ws);
    const of = (workflow: string, events: Event[]) => events.filter((event) => event.workflow === workflow);

    const names = Array.from({ length: 10 }, (_, index) => `f${index}.txt`);
    for (const name of names) {
      // Renamed into place, as a careful writer drops a file.
      writeFileSync(join(inbox, `${name}.part`), `content of ${name}\n`);
      renameSync(join(inbox, `${name}.part`), join(inbox, name));
    }
    await expect.poll(() => of('drop', finished(serves)).length, { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(names.length);
    // Both processes saw every file and offered it; BullMQ turned each second offer into nothing.
    await expect.poll(async () => (await duplicatedOffers('watch.drop')).length, { timeout: 15_000, interval: 200 }).toBe(names.length);
    expect(new Set(await duplicatedOffers('watch.drop')).size).toBe(names.length); // one second offer per file

    // Both processes offer every occurrence from the first one both have armed: the second offer of each finds
    // the first one's job. Both also take a share of them (whichever BullMQ worker is free takes the next one).
    const bothFrom = armedByAllFrom(serves);
    const offeredByBoth = async () => {
      const started = of('tick', runs(serves)).map((event: Event) => event.trigger.occurrence as string);
      const seen = started.filter((occurrence) => Date.parse(occurrence.slice('tick@'.length)) >= bothFrom);
      const duplicated = new Set(await duplicatedOffers('schedule.tick'));
      return seen.length >= BOTH_RUNNING_OCCURRENCES && seen.every((occurrence) => duplicated.has(occurrenceJobId(occurrence)));
    };
    const shared = async () => (await offeredByBoth()) && serves.every((serve) => of('tick', finished([serve])).length > 0);
    await expect.poll(shared, { timeout: (BOTH_RUNNING_OCCURRENCES + 30) * 1000, interval: 200 }).toBe(true);
    // A rolling restart: one process stops, the other goes on alone, and no occurrence falls between them
    // (an occurrence the stopping process had just taken is handed back to the other).
    const [first, second] = serves as [Serve, Serve];
    expect(await first.stop('SIGTERM')).toBe(0);
    const alone = of('tick', finished([second])).length;
    await expect.poll(() => of('tick', finished([second])).length - alone, { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(ALONE_OCCURRENCES);
    expect(await second.stop('SIGTERM')).toBe(0);
    await stopWorker();

    const sideEffects = lines(ws.counter);
    const records = runRecords(ws.artifacts, 'tick');
    const occurrences = records.map((record) => record.trigger.occurrence as string).sort();
    expect(occurrences.length).toBeGreaterThanOrEqual(BOTH_RUNNING_OCCURRENCES + ALONE_OCCURRENCES);
    expect(new Set(occurrences).size).toBe(occurrences.length); // no occurrence ran twice
    expect(sideEffects.filter((line) => line.startsWith('tick@')).sort()).toEqual(occurrences); // and each one's side effect happened once, on the worker
    // No gaps: consecutive seconds from the first to the last.
    const seconds = occurrences.map((id) => Date.parse(id.slice('tick@'.length)) / 1000);
    expect(seconds.at(-1)! - seconds[0]! + 1).toBe(seconds.length);
    expect(records.every((record) => record.status === 'succeeded' && record.trigger.type === 'schedule')).toBe(true);
    // The runs the two processes announced are the runs on disk: nothing was started and then lost.
    expect(of('tick', runs(serves)).map((event: Event) => event.trigger.occurrence).sort()).toEqual(occurrences);
    // A second offer is of an occurrence that ran, and there is at most one per occurrence (two processes offer it).
    const duplicated = await duplicatedOffers('schedule.tick');
    expect(new Set(duplicated).size).toBe(duplicated.length);
    expect(duplicated.filter((id) => !occurrences.map(occurrenceJobId).includes(id))).toEqual([]);

    const sources = runRecords(ws.artifacts, 'drop').map((record) => record.trigger.source as string);
    expect(sources.sort()).toEqual(names.map((name) => join(inbox, name)).sort());
    expect(sideEffects.filter((line) => !line.startsWith('tick@')).sort()).toEqual(sources);
    // Neither the schedule's occurrence locks nor the files' content markers had to turn a second process away: the queue did.
    expect(skipped(serves)).toEqual([]);
    // Queue mode takes no lock files.
    expect(existsSync(join(ws.artifacts, '.runner', 'locks'))).toBe(false);
  }, (BOTH_RUNNING_OCCURRENCES + 90) * 1000);
});
