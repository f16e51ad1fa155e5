import type { ConnectionOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** BullMQ keys start with this: queue `image` lives under `runner:image:*`. */
export const QUEUE_PREFIX = 'runner';

/** The Redis channel on which coordinators ask workers to cancel a job. */
export const CANCEL_CHANNEL = `${QUEUE_PREFIX}:cancel`;

/**
 * BullMQ connection options from a redis:// (or rediss://) URL. Options, not
 * a shared client: each Queue, Worker and QueueEvents opens its own (workers
 * and event listeners block on theirs). `maxRetriesPerRequest: null` is what
 * BullMQ workers require.
 */
export function connectionFromUrl(url: string): ConnectionOptions {
  const parsed = new URL(url);
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
    ...(parsed.username && { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password && { password: decodeURIComponent(parsed.password) }),
    ...(Number.isInteger(db) && db > 0 && { db }),
    ...(parsed.protocol === 'rediss:' && { tls: {} }),
    maxRetriesPerRequest: null,
  };
}

/** The per-app limits that hold across every worker: the app's `concurrency` and `rate` as BullMQ's global ones. */
export async function applyGlobalLimits(
  queue: Pick<Queue, 'setGlobalConcurrency' | 'setGlobalRateLimit' | 'removeGlobalConcurrency' | 'removeGlobalRateLimit'>,
  app: { concurrency?: number; rate?: { count: number; intervalMs: number } },
): Promise<void> {
  await (app.concurrency !== undefined ? queue.setGlobalConcurrency(app.concurrency) : queue.removeGlobalConcurrency());
  await (app.rate ? queue.setGlobalRateLimit(app.rate.count, app.rate.intervalMs) : queue.removeGlobalRateLimit());
}

/**
 * The ID of the newest entry of a Redis stream, `0-0` when it has none. A
 * BullMQ QueueEvents starts at `$` once its first read reaches Redis, a moment
 * after it is ready, and loses what was written in that moment (BullMQ issue
 * 2874); given this ID (`lastEventId`) it reads every event written after the
 * ID was taken.
 */
export async function newestStreamEntry(redis: Redis, key: string): Promise<string> {
  const [newest] = await redis.xrevrange(key, '+', '-', 'COUNT', 1);
  return newest?.[0] ?? '0-0';
}
