import { Queue, QueueEvents } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { closeWithin } from '../../src/queue/bounded-close.js';
import { connectionFromUrl, QUEUE_PREFIX } from '../../src/queue/redis-connection.js';
import { startRedisServer } from '../helpers/redis-server.js';

// BullMQ's close sends QUIT, which waits for a Redis that went away to come back, possibly forever: the
// coordinator closes its queues with closeWithin, which drops their connections after a grace.
describe('closing BullMQ queues and event listeners', () => {
  it('closes them as BullMQ does with Redis up, and drops them after the grace with Redis gone', async () => {
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
      // Without the grace this would wait for Redis (the test would time out).
      expect(await closeWithin(stranded, 300)).toBe(false);
    } finally {
      await redis.stop();
    }
  });
});
