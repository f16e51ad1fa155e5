import { Job, Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { RunnerConfig } from '../../src/config/types.js';
import type { CallJob, CallOutcome } from '../../src/queue/call-job.js';
import { jobIdForIntent, recoverCallOutcomes } from '../../src/queue/recover-calls.js';
import { connectionFromUrl, QUEUE_PREFIX } from '../../src/queue/redis-connection.js';
import type { JournalEntry } from '../../src/store/run-store.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

// What `runner resume` learns from the queue about calls whose coordinator died: a real Redis, BullMQ's own
// Queue and Worker standing in for the dead coordinator and a `runner worker`.

let redis: RedisServer;
let queue: Queue<CallJob, CallOutcome>;
const config = { apps: { app: {} } } as unknown as RunnerConfig;

beforeAll(async () => {
  redis = await startRedisServer();
  queue = new Queue('app', { connection: connectionFromUrl(redis.url), prefix: QUEUE_PREFIX });
}, 30_000);

afterAll(async () => {
  await queue?.close();
  await redis?.stop();
});

function intent(id: string): JournalEntry {
  return { id, runId: 'r1', stepId: id, item: null, attempt: 1, uses: 'app.send', sentAt: '2026-01-15T10:00:00.000Z' };
}

function job(stepId: string): CallJob {
  const retry = { attempts: 1, delayMs: 1, backoff: 1, maxDelayMs: 1, on: [], unsafe: false };
  return { runId: 'r1', workflow: 'wf', stepId, uses: 'app.send', app: 'app', tool: 'send', args: {}, callDir: '/nowhere', retrySafe: false, sideEffects: true, retry, timeoutMs: 5_000, firstBudgetMs: 5_000 };
}

const done = (text: string): CallOutcome => ({ status: 'succeeded', attempts: 1, outputs: { text }, text, files: [], error: null, history: [] });

describe('recoverCallOutcomes', () => {
  it('reads back a finished job, waits for one still running, and leaves out jobs that failed or are gone', async () => {
    const add = (id: string) => queue.add('call', job(id), { jobId: jobIdForIntent(id), attempts: 1 });
    await add('finished');
    await add('failing');
    // `running` is held by its worker until the resume has read its state, and ends at once after: the resume always
    // finds it unfinished, and it ends before the resume is listening for its end (which it must not miss).
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // A worker takes these two now: one finishes, one fails in BullMQ itself (its processor threw).
    const worker = new Worker<CallJob, CallOutcome>(
      'app',
      async (taken) => {
        if (taken.data.stepId === 'failing') throw new Error('worker lost');
        if (taken.data.stepId === 'running') await held;
        return done(taken.data.stepId);
      },
      { connection: connectionFromUrl(redis.url), prefix: QUEUE_PREFIX },
    );
    onTestFinished(async () => {
      release();
      await worker.close();
    });
    await expect.poll(async () => [await queue.getCompletedCount(), await queue.getFailedCount()], { timeout: 10_000 }).toEqual([1, 1]);
    await add('running');
    await expect.poll(() => queue.getActiveCount(), { timeout: 10_000 }).toBe(1);
    const seen: string[] = [];
    const getState = Job.prototype.getState;
    const spy = vi.spyOn(Job.prototype, 'getState').mockImplementation(async function (this: Job) {
      const state = await getState.call(this);
      if ((this.data as CallJob).stepId === 'running') {
        seen.push(state);
        release();
      }
      return state;
    });
    onTestFinished(() => void spy.mockRestore());
    const recovered = await recoverCallOutcomes(redis.url, config, ['finished', 'failing', 'gone', 'running'].map(intent));
    expect(seen).toEqual(['active']);
    expect([...recovered.keys()].sort()).toEqual(['finished', 'running']);
    expect(recovered.get('finished')).toEqual(done('finished'));
    expect(recovered.get('running')).toEqual(done('running'));
  }, 30_000);

  it('names each job after its intent, without the colons BullMQ refuses', () => {
    const id = jobIdForIntent('20260115-100000-000-abcd/step:1/-/s1/1');
    expect(id).toMatch(/^call-[0-9a-f]{32}$/);
    expect(jobIdForIntent('20260115-100000-000-abcd/step:1/-/s1/1')).toBe(id);
    expect(jobIdForIntent('20260115-100000-000-abcd/step:1/-/s1/2')).not.toBe(id);
  });
});
