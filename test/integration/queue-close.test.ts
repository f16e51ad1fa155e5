import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RunnerConfig } from '../../src/config/types.js';
import { closeWithin } from '../../src/queue/bounded-close.js';
import type { CallJob } from '../../src/queue/call-job.js';
import { QueueDispatcher } from '../../src/queue/queue-dispatcher.js';
import { connectionFromUrl, QUEUE_PREFIX } from '../../src/queue/redis-connection.js';
import { startRedisServer } from '../helpers/redis-server.js';

// BullMQ's close sends QUIT, which waits for a Redis that went away to come back, possibly forever: the
// coordinator closes its queues with closeWithin, which drops their connections after a grace.
describe('closing BullMQ queues and event listeners', () => {
  it('closes them as BullMQ does with Redis up, and ends within the grace with Redis gone', async () => {
    const redis = await startRedisServer();
    try {
      const open = async () => {
        const connection = connectionFromUrl(redis.url);
        const queue = new Queue('close-test', { connection, prefix: QUEUE_PREFIX });
        const events = new QueueEvents('close-test', { connection, prefix: QUEUE_PREFIX });
        await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
        return [queue, events];
      };
      expect(await closeWithin(await open(), 10_000)).toBe(true);

      const stranded = await open();
      await redis.stop();
      // BullMQ's close may notice the lost connection at once (true) or wait for Redis to come back, which here
      // is never: closeWithin then drops the connections after the grace (false). Either way it ends; without
      // the grace most runs of this test time out.
      expect([true, false]).toContain(await closeWithin(stranded, 300));
    } finally {
      await redis.stop();
    }
  });
});

describe('a call stopped while its job cannot be added', () => {
  it('is given up on after the grace, as unknown, and its job is removed once it lands', async () => {
    const redis = await startRedisServer();
    const admin = new Redis(redis.url);
    const dispatcher = new QueueDispatcher(redis.url, { apps: {} } as unknown as RunnerConfig, 300);
    try {
      // Redis holds every write (BullMQ's add is a script that writes): the add waits as it would through an outage.
      await admin.call('client', 'pause', '600000', 'WRITE');
      const controller = new AbortController();
      const job = { runId: 'r1', workflow: 'wf', stepId: 's', uses: 'held.echo', app: 'held', tool: 'echo', args: {}, callDir: '/tmp/none', retrySafe: false, sideEffects: false, retry: {}, timeoutMs: 1_000, firstBudgetMs: 1_000 } as unknown as CallJob;
      const outcome = dispatcher.dispatch(job, controller.signal, {});
      controller.abort();
      // Without the grace this waits for the pause to end (ten minutes: the test times out).
      expect(await outcome).toMatchObject({ status: 'cancelled', error: { kind: 'cancelled', outcome: 'unknown' } });
      await admin.call('client', 'unpause');
      // The add lands now, and the job is removed at once instead of waiting for a worker.
      const queue = new Queue('held', { connection: { host: '127.0.0.1', port: redis.port }, prefix: QUEUE_PREFIX });
      try {
        for (let tries = 0; tries < 200; tries++) {
          const counts = await queue.getJobCounts('waiting', 'active', 'completed', 'failed');
          if (Object.values(counts).every((count) => count === 0) && (await admin.exists(`${QUEUE_PREFIX}:held:id`)) === 1) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(await admin.get(`${QUEUE_PREFIX}:held:id`)).toBe('1'); // the job was added…
        expect(await queue.getJobCounts('waiting', 'active', 'completed', 'failed')).toEqual({ waiting: 0, active: 0, completed: 0, failed: 0 }); // …and removed
      } finally {
        await queue.close();
      }
    } finally {
      await admin.call('client', 'unpause').catch(() => undefined);
      await dispatcher.close();
      admin.disconnect();
      await redis.stop();
    }
  });
});
