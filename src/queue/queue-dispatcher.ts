import { Queue, QueueEvents, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { CallAbortReason } from '../apps/call-error.js';
import type { StepErrorRecord } from '../artifacts/run-record.js';
import type { RunnerConfig } from '../config/types.js';
import { messageOf } from '../errors.js';
import type { CallJob, CallOutcome, JobProgressMark } from './call-job.js';
import type { CallHooks } from './execute-call-job.js';
import { closeWithin, settledUnlessStopped } from './bounded-close.js';
import { applyGlobalLimits, CANCEL_CHANNEL, connectionFromUrl, newestStreamEntry, QUEUE_PREFIX } from './redis-connection.js';
import { jobIdForIntent } from './recover-calls.js';

/** How long a cancelled job's worker has to report back before the step is given up on. */
const CANCEL_GRACE_MS = 10_000;
/** How long closing waits for Redis to take the QUITs before it drops the connections. */
const CLOSE_GRACE_MS = 2_000;
/** How long a stopped call still waits for its job to be added before it is given up on. */
const ADD_GRACE_MS = 2_000;

/** An app's queue: its jobs carry a CallJob and return a CallOutcome. */
type CallQueue = Queue<CallJob, CallOutcome>;

/** A cancel request as published on CANCEL_CHANNEL. */
export interface CancelMessage {
  app: string;
  jobId: string;
  kind: CallAbortReason['kind'];
  message: string;
}

/**
 * The coordinator's side of queue mode: each app call becomes a job on the
 * app's queue (`runner:<app>`), and its outcome comes back as the job's
 * return value. The journal intent of a call with side effects is committed
 * before the job is added, so it precedes the request as it does in-process.
 */
export class QueueDispatcher {
  private readonly connection;
  private readonly queues = new Map<string, Promise<{ queue: CallQueue; events: QueueEvents }>>();
  private publisher: Redis | undefined;

  constructor(
    private readonly url: string,
    private readonly config: RunnerConfig,
    /** How long a stopped call still waits for its job to be added (Redis away) before it is given up on. */
    private readonly addGraceMs = ADD_GRACE_MS,
  ) {
    this.connection = connectionFromUrl(url);
  }

  /** A CallDispatcher: adds the job and resolves with its outcome; cancels it when `signal` aborts. */
  readonly dispatch = async (job: CallJob, signal: AbortSignal, hooks: CallHooks): Promise<CallOutcome> => {
    if (signal.aborted) return stoppedOutcome(signal, 'not-sent');
    let journaled = false;
    let jobId: string | undefined;
    if (job.sideEffects && hooks.intent) {
      try {
        const intentId = await hooks.intent(1);
        if (typeof intentId === 'string') jobId = jobIdForIntent(intentId);
        journaled = true;
      } catch (error) {
        return failedOutcome({ kind: 'storage', message: `${job.uses} was not sent: its intent could not be recorded: ${messageOf(error)}`, outcome: 'not-sent' });
      }
    }
    const outcome = await this.runJob(job, signal, hooks, jobId);
    if (journaled) hooks.settle?.(outcome.status === 'succeeded' ? 'succeeded' : 'failed');
    return outcome;
  };

  private async runJob(job: CallJob, signal: AbortSignal, hooks: CallHooks, jobId?: string): Promise<CallOutcome> {
    const adding = (async () => {
      const { queue, events } = await this.open(job.app);
      const added = await queue.add('call', job, {
        // Named after the journal's intent: a resume after this coordinator died finds the job's outcome (recover-calls.ts).
        ...(jobId && { jobId }),
        // Kept a while so a coordinator that listens late still finds the outcome; BullMQ retries nothing itself.
        removeOnComplete: { age: 3600 },
        removeOnFail: { age: 24 * 3600 },
        attempts: 1,
      });
      return { queue, events, added };
    })();
    // Opening the queue and adding the job wait through a Redis outage. A stop (Ctrl-C, a storage failure)
    // meanwhile waits for them a short while, then the call is given up on: the job may still be added once
    // Redis is back, so a call with side effects is unknown; it is cancelled if it lands.
    const ready = await settledUnlessStopped(adding, signal, this.addGraceMs);
    if (!ready) {
      void adding.then(({ queue, added }) => this.cancel(queue, added, job, signal)).catch(() => undefined);
      return stoppedOutcome(signal, job.retrySafe ? undefined : 'unknown');
    }
    const { queue, events, added } = ready;
    const addedId = added.id!;
    const onActive = ({ jobId: id }: { jobId: string }) => {
      if (id === addedId) hooks.onStatus?.('running', 1);
    };
    // The worker's throttled copy of the app's progress notifications (see processCallJob); `seq` skips repeats.
    let lastSeq = 0;
    const onProgress = ({ jobId: id, data }: { jobId: string; data: unknown }) => {
      const call = id === addedId && typeof data === 'object' && data !== null ? (data as JobProgressMark).call : undefined;
      if (!call || typeof call.progress !== 'number' || !(call.seq > lastSeq)) return;
      lastSeq = call.seq;
      hooks.onProgress?.({ progress: call.progress, ...(call.total !== undefined && { total: call.total }), ...(call.message !== undefined && { message: call.message }) });
    };
    events.on('active', onActive);
    if (hooks.onProgress) events.on('progress', onProgress);
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<CallOutcome>((resolve) => {
      onAbort = () => {
        // The worker reports the cancelled call itself; the grace covers a worker that never answers, and a
        // Redis that does not (the cancel's own commands then wait for it to come back): it starts now.
        setTimeout(() => resolve(stoppedOutcome(signal, job.retrySafe ? undefined : 'unknown')), CANCEL_GRACE_MS).unref();
        void this.cancel(queue, added, job, signal).then((removed) => {
          if (removed) resolve(stoppedOutcome(signal, 'not-sent'));
        });
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const finished = added.waitUntilFinished(events).then(
        (outcome: CallOutcome) => outcome,
        (error: unknown) => lostOutcome(job, error),
      );
      return await Promise.race([finished, stopped]);
    } finally {
      events.off('active', onActive);
      events.off('progress', onProgress);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  /** Removes a job still waiting (then nothing was sent), else asks the worker running it to abort it. */
  private async cancel(queue: CallQueue, added: Job, job: CallJob, signal: AbortSignal): Promise<boolean> {
    const reason = signal.reason instanceof CallAbortReason ? signal.reason : new CallAbortReason('cancelled', 'the run was cancelled');
    try {
      const state = await queue.getJobState(added.id!);
      if (state === 'waiting' || state === 'prioritized' || state === 'delayed') {
        await added.remove();
        return true;
      }
    } catch {
      // Taken by a worker meanwhile (a locked job cannot be removed): cancel it there.
    }
    const message: CancelMessage = { app: job.app, jobId: added.id!, kind: reason.kind, message: reason.message };
    await this.plainConnection().publish(CANCEL_CHANNEL, JSON.stringify(message)).catch(() => undefined);
    return false;
  }

  private open(app: string): Promise<{ queue: CallQueue; events: QueueEvents }> {
    let opened = this.queues.get(app);
    if (!opened) {
      opened = (async () => {
        const queue: CallQueue = new Queue(app, { connection: this.connection, prefix: QUEUE_PREFIX });
        // While Redis restarts, each reconnect attempt is an 'error'; without a listener BullMQ prints every one
        // (a stack per attempt) over the progress view. The connections retry by themselves; the run store's own
        // writes are what give up (as `storage`) when Redis stays away too long.
        queue.on('error', ignoreConnectionError);
        await applyGlobalLimits(queue, this.config.apps[app] ?? {});
        // Events are read from the stream's last entry as it is now, before this coordinator adds a job. Left to
        // itself, QueueEvents starts at `$` once its connection is named: an `active` or `progress` event written
        // before its first read was lost, and a call that started in that moment showed as queued until it ended.
        // When even that read fails (Redis away too long), the events are read from `$` as before.
        const lastEventId = await newestStreamEntry(this.plainConnection(), queue.keys.events).catch(() => undefined);
        const events = new QueueEvents(app, { connection: this.connection, prefix: QUEUE_PREFIX, autorun: false, ...(lastEventId && { lastEventId }) });
        events.on('error', ignoreConnectionError);
        events.run().catch((error: unknown) => events.emit('error', error as Error));
        await events.waitUntilReady();
        // One listener per call in flight: thousands of foreach items wait on the same QueueEvents, and each
        // job's waitUntilFinished also listens for the Queue's 'closing' (past 10 Node warned on every run).
        events.setMaxListeners(0);
        queue.setMaxListeners(0);
        return { queue, events };
      })();
      this.queues.set(app, opened);
    }
    return opened;
  }

  /** A connection of this coordinator's own, outside BullMQ's: cancels are published on it, and streams read. */
  private plainConnection(): Redis {
    return (this.publisher ??= new Redis(this.connection as object).on('error', ignoreConnectionError));
  }

  /** Closes the queues, event listeners and the cancel publisher; with Redis away, drops them after a grace. */
  async close(): Promise<void> {
    const opened = (await Promise.allSettled(this.queues.values())).flatMap((entry) => (entry.status === 'fulfilled' ? [entry.value] : []));
    this.queues.clear();
    await closeWithin(
      opened.flatMap(({ events, queue }) => [events, queue]),
      CLOSE_GRACE_MS,
    );
    this.publisher?.disconnect();
  }

  /** For messages: where the jobs go. */
  get where(): string {
    return this.url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** A job that failed in BullMQ itself (its worker died more often than allowed, or the processor threw). */
function lostOutcome(job: CallJob, error: unknown): CallOutcome {
  return failedOutcome({
    kind: 'transport',
    message: `${job.uses}: its worker did not finish the call: ${messageOf(error)}`,
    ...(!job.retrySafe && { outcome: 'unknown' as const }),
  });
}

function stoppedOutcome(signal: AbortSignal, outcome: StepErrorRecord['outcome']): CallOutcome {
  const reason = signal.reason instanceof CallAbortReason ? signal.reason : new CallAbortReason('cancelled', 'the run was cancelled');
  const record: StepErrorRecord = { kind: reason.kind, message: reason.message, ...(outcome && { outcome }) };
  return { ...failedOutcome(record), status: reason.kind === 'cancelled' ? 'cancelled' : 'failed' };
}

function failedOutcome(error: StepErrorRecord): CallOutcome {
  return { status: 'failed', attempts: 1, error, history: [] };
}

function ignoreConnectionError(): void {}

