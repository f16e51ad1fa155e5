import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { CallAbortReason } from '../apps/call-error.js';
import { formatMs } from '../config/durations.js';
import type { AppRegistry } from '../apps/registry.js';
import type { Clock } from '../clock.js';
import type { RunnerConfig } from '../config/types.js';
import type { Limits } from '../scheduler/limits.js';
import type { CallJob, CallOutcome, JobProgressMark } from './call-job.js';
import { settlesWithin } from './bounded-close.js';
import { executeCallJob, type CallHost } from './execute-call-job.js';
import { throttleProgress } from './progress-throttle.js';
import type { CancelMessage } from './queue-dispatcher.js';
import { applyGlobalLimits, CANCEL_CHANNEL, connectionFromUrl, QUEUE_PREFIX } from './redis-connection.js';

export interface CallWorkersOptions {
  url: string;
  config: RunnerConfig;
  apps: AppRegistry;
  limits: Limits;
  clock: Clock;
  /** How long a job's lock lasts without renewal: a killed worker's job is handed back after about this long. @default 30000 */
  lockDurationMs?: number;
  onError?: (error: Error) => void;
  /** How long stopping waits for an unreachable Redis once the calls in flight are done. @default 5000 */
  redisGraceMs?: number;
}

export interface CallWorkers {
  /**
   * Stops taking jobs, lets the calls in flight finish and closes the connections. False when Redis
   * did not answer within the grace once the calls were done: BullMQ's timers then still wait for it,
   * and the process must end by itself.
   */
  close(): Promise<boolean>;
}

/**
 * Consumes call jobs for every configured app: one BullMQ Worker per app
 * queue, each up to the process `concurrency` (the shared Limits hold the
 * process total and the app's per-process share). The app's `concurrency`
 * and `rate` are set as the queue's global limits, so they hold across every
 * worker together. Resolves once every worker is listening.
 */
export async function startCallWorkers(options: CallWorkersOptions): Promise<CallWorkers> {
  const { config } = options;
  const connection = connectionFromUrl(options.url);
  const host: CallHost = { apps: options.apps, limits: options.limits, workflowQueue: null, clock: options.clock, secretValues: config.secretValues };
  const lockDuration = options.lockDurationMs ?? 30_000;
  const workers = new Map<string, Worker<CallJob, CallOutcome>>();
  const running = new InFlight();
  for (const app of Object.keys(config.apps)) {
    const queue = new Queue(app, { connection, prefix: QUEUE_PREFIX });
    // Without a listener BullMQ prints a stack for each failed connect (a worker started before Redis is up).
    queue.on('error', (error) => options.onError?.(error));
    await applyGlobalLimits(queue, config.apps[app]);
    await queue.close();
    const worker = new Worker<CallJob, CallOutcome>(app, (job, _token, signal) => running.track(processCallJob(job, host, signal)), {
      connection,
      prefix: QUEUE_PREFIX,
      concurrency: config.concurrency,
      lockDuration,
      stalledInterval: lockDuration,
      // A job whose worker died is handed back once; processCallJob decides whether running it again is safe.
      maxStalledCount: 1,
    });
    worker.on('error', (error) => options.onError?.(error));
    workers.set(app, worker);
  }
  await Promise.all([...workers.values()].map((worker) => worker.waitUntilReady()));

  // Cancel requests from coordinators (Ctrl-C, a step or run timeout) reach the job's signal here.
  const subscriber = new Redis(connection as object);
  subscriber.on('error', (error) => options.onError?.(error));
  subscriber.on('message', (_channel, text: string) => {
    const message = parseCancel(text);
    if (!message) return;
    workers.get(message.app)?.cancelJob(message.jobId, new CallAbortReason(message.kind, message.message) as unknown as string);
  });
  await subscriber.subscribe(CANCEL_CHANNEL);

  return {
    async close() {
      subscriber.disconnect();
      const all = [...workers.values()];
      // BullMQ's close waits for the calls in flight, reports their results and sends QUIT; while Redis is
      // away those wait for it to come back, which may be never. Once the calls are done, Redis gets a grace
      // to take their results; after it the caller stops without it, as if the worker had died.
      const closing = Promise.allSettled(all.map((worker) => worker.close()));
      await running.idle();
      const graceMs = options.redisGraceMs ?? REDIS_GRACE_MS;
      if (await settlesWithin(closing, graceMs)) return true;
      options.onError?.(
        new Error(
          `Redis did not answer within ${formatMs(graceMs)} while stopping: stopping without it. The job of a call that ` +
            `finished meanwhile goes back to the queue after its lock time (an unsafe call's outcome is then unknown)`,
        ),
      );
      return false;
    },
  };
}

/** How long a stopping worker waits for Redis, once its calls are done, before it drops the connections. */
const REDIS_GRACE_MS = 5_000;

/** The calls a worker is running, so that stopping knows when the last one returned. */
class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  async track<T>(call: Promise<T>): Promise<T> {
    this.count++;
    try {
      return await call;
    } finally {
      this.count--;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    }
  }

  /** Resolves once no call is running. */
  idle(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/**
 * BullMQ's processor: runs one call job. A job handed back after its worker
 * died is run again only when that is safe: its request was never sent, or
 * the coordinator said repeating it is (read-only, idempotent, `retry.unsafe`).
 */
export async function processCallJob(job: Job<CallJob, CallOutcome>, host: CallHost, signal?: AbortSignal): Promise<CallOutcome> {
  const data = job.data;
  const previous = job.progress as JobProgressMark | number | undefined;
  if (typeof previous === 'object' && previous?.sent !== undefined && !data.retrySafe) {
    const message = `${data.uses}: the worker running it stopped after the request was sent; it may or may not have had its effect (outcome unknown)`;
    return { status: 'failed', attempts: previous.sent, error: { kind: 'transport', message, outcome: 'unknown' }, history: [] };
  }
  // Every write of the progress field carries the sent mark too: it replaces the whole field.
  const mark: JobProgressMark = {};
  let seq = 0;
  const progress = throttleProgress((call) => {
    mark.call = { ...call, seq: ++seq };
    // Progress is for show: a write that fails (Redis away a moment) is not the call's failure.
    job.updateProgress({ ...mark }).catch(() => undefined);
  }, host.clock);
  const controller = new AbortController();
  const onAbort = () => {
    const reason: unknown = signal!.reason;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- BullMQ aborts with a string (cancelJob's reason) or an Error
    controller.abort(reason instanceof CallAbortReason ? reason : new CallAbortReason('cancelled', `the worker stopped the call${reason ? `: ${String(reason)}` : ''}`));
  };
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await executeCallJob(data, host, controller.signal, {
      // Recorded before the request goes out, so a second run of this job knows it may have had its effect.
      intent: data.sideEffects ? (attempt) => ((mark.sent = attempt), job.updateProgress({ ...mark })) : undefined,
      onProgress: (call) => progress.push({ progress: call.progress, ...(call.total !== undefined && { total: call.total }), ...(call.message !== undefined && { message: call.message }) }),
    });
  } finally {
    progress.stop();
    signal?.removeEventListener('abort', onAbort);
  }
}

function parseCancel(text: string): CancelMessage | undefined {
  try {
    const message = JSON.parse(text) as CancelMessage;
    return typeof message.app === 'string' && typeof message.jobId === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}
