import { Queue, Worker } from 'bullmq';
import type { Clock } from '../clock.js';
import { connectionFromUrl, QUEUE_PREFIX } from './redis-connection.js';

/**
 * How long a finished firing job is kept (seconds). An offer of the same id
 * within this is a no-op: it covers the late tolerance, restarts and clock
 * skew between machines, without keeping a day of jobs of a six-field schedule.
 */
export const FIRING_RETENTION_S = 3600;

/** A process that is stopping hands a job back; BullMQ gives it to another process, this many times at most. */
const HAND_BACKS = 5;

/** Firings taken at once by one process: taking one only launches a run, it never waits for it. */
const TAKE_CONCURRENCY = 8;

/** How long closing may wait for Redis before the connections are dropped (a quit waits for an unreachable Redis forever). */
const CLOSE_WAIT_MS = 5_000;

/** The same connection error is reported at most once per this (ioredis retries every few hundred ms). */
const REPEAT_ERROR_MS = 60_000;

export interface TriggerQueuesOptions {
  url: string;
  clock: Clock;
  onError: (error: Error) => void;
}

/**
 * Trigger firings on BullMQ, for queue mode's `serve` processes: every
 * process offers each firing it sees under a deterministic job id, BullMQ
 * keeps one job per id (a second add of an existing id is a no-op), and one
 * BullMQ Worker takes each job, in whichever process consumes that queue.
 * Queues live under the same `runner` prefix as the app queues.
 */
export class TriggerQueues {
  private readonly queues = new Map<string, Queue>();
  private readonly workers: Worker[] = [];
  private taking = true;
  private lastError: { message: string; atMs: number } | undefined;

  constructor(private readonly options: TriggerQueuesOptions) {}

  /** Adds job `id` to queue `name` unless a job of that id exists (waiting, running or finished within the retention). */
  async offer(name: string, id: string, data: object): Promise<void> {
    await this.queueOf(name).add('firing', data, {
      jobId: id,
      attempts: HAND_BACKS,
      removeOnComplete: { age: FIRING_RETENTION_S },
      removeOnFail: { age: FIRING_RETENTION_S },
    });
  }

  /**
   * Takes jobs of queue `name` in this process: `take` gets the job's data and
   * when it was added (ms); a `take` that throws hands the job back, to be taken again.
   */
  async consume(name: string, take: (data: unknown, addedAtMs: number) => Promise<void>): Promise<void> {
    if (!this.taking) return; // stopped while starting
    const worker = new Worker(name, (job) => take(job.data, job.timestamp), {
      connection: connectionFromUrl(this.options.url),
      prefix: QUEUE_PREFIX,
      concurrency: TAKE_CONCURRENCY,
    });
    worker.on('error', (error) => this.report(error));
    this.workers.push(worker);
    await worker.waitUntilReady();
  }

  /** Stops taking jobs; resolves once the ones being taken are done (or handed back). */
  async stopTaking(): Promise<void> {
    this.taking = false;
    await Promise.all(this.workers.splice(0).map((worker) => this.closeWithin(worker)));
  }

  /** Stops taking and closes the queues. */
  async close(): Promise<void> {
    await this.stopTaking();
    await Promise.all([...this.queues.values()].map((queue) => this.closeWithin(queue)));
    this.queues.clear();
  }

  private queueOf(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      // Without the offline queue, an offer while Redis is unreachable fails at once instead of waiting for it.
      queue = new Queue(name, { connection: { ...connectionFromUrl(this.options.url), enableOfflineQueue: false }, prefix: QUEUE_PREFIX });
      queue.on('error', (error) => this.report(error));
      this.queues.set(name, queue);
    }
    return queue;
  }

  /**
   * Closes a queue or worker. A graceful close quits over its connections, and
   * a quit waits for Redis: with Redis unreachable, the close is forced (the
   * connections dropped); a close still waiting after CLOSE_WAIT_MS is left behind.
   */
  private async closeWithin(target: Queue | Worker): Promise<void> {
    const closing = (async () => {
      const client = await target.getBackend().client;
      if (client.status === 'ready') return target.close();
      if (target instanceof Worker) return target.close(true);
      await target.getBackend().close(true);
      await target.close();
    })();
    const cut = new AbortController();
    await Promise.race([closing.catch(() => undefined), this.options.clock.sleep(CLOSE_WAIT_MS, cut.signal).catch(() => undefined)]);
    cut.abort();
  }

  private report(error: Error): void {
    const nowMs = this.options.clock.now();
    if (this.lastError?.message === error.message && nowMs - this.lastError.atMs < REPEAT_ERROR_MS) return;
    this.lastError = { message: error.message, atMs: nowMs };
    this.options.onError(error);
  }
}
