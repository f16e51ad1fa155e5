import { createHash } from 'node:crypto';
import { Job, Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import type { Clock } from '../clock.js';
import type { RunnerConfig } from '../config/types.js';
import { isOwnerLive } from '../store/run-owner.js';
import type { JournalEntry, RunOwner, RunStore } from '../store/run-store.js';
import type { RecoveredCall } from '../store/take-over.js';
import type { CallJob, CallOutcome } from './call-job.js';
import { connectionFromUrl, newestStreamEntry, QUEUE_PREFIX } from './redis-connection.js';

/** How long a resume waits, beyond the job's own budget, for a job still queued or running. */
const WAIT_MARGIN_MS = 30_000;

/**
 * The BullMQ job id of a call with side effects: derived from its journal
 * intent, so whoever resumes the run finds the job. A hash, because BullMQ
 * refuses ids with `:` and step ids are the user's.
 */
export function jobIdForIntent(intentId: string): string {
  return `call-${createHash('sha256').update(intentId).digest('hex').slice(0, 32)}`;
}

/**
 * Before `runner resume` takes a queue-mode run over: the outcomes of the
 * jobs of its open intents (see recoverCallOutcomes). The run is claimed
 * first, so a run still live elsewhere is refused (by takeOverRun, which
 * claims it again as its holder) before any job is waited for; undefined
 * when there is nothing to recover or the claim failed.
 */
export async function recoverForResume(store: RunStore, runId: string, owner: RunOwner, clock: Clock, url: string, config: RunnerConfig): Promise<Map<string, RecoveredCall> | undefined> {
  const open = store.openIntents(runId);
  if (open.length === 0) return undefined;
  if (!store.claimRun(runId, owner, (holder) => isOwnerLive(holder, clock.now())).claimed) return undefined;
  try {
    return await recoverCallOutcomes(url, config, open);
  } catch (error) {
    store.releaseRun(runId, owner);
    throw error;
  }
}

/**
 * For the open intents of a run whose coordinator died: the outcome of each
 * one's job, when the queue still has it. A job that finished is read back; a
 * job still waiting or running is waited for (up to its own timeout and
 * retries, and a margin); a job that failed in BullMQ itself, or is gone
 * (kept one hour after it completed), is left out: its call stays unknown.
 */
export async function recoverCallOutcomes(url: string, config: RunnerConfig, intents: readonly JournalEntry[]): Promise<Map<string, RecoveredCall>> {
  const recovered = new Map<string, RecoveredCall>();
  if (intents.length === 0) return recovered;
  const connection = connectionFromUrl(url);
  // Outside BullMQ's own connections: the event streams' newest entries are read on it.
  const plain = new Redis(connection as object).on('error', () => undefined);
  const opened = new Map<string, Promise<AppQueue>>();
  try {
    await Promise.all(
      intents.map(async (intent) => {
        const app = intent.uses.slice(0, intent.uses.indexOf('.'));
        if (!config.apps[app]) return;
        let entry = opened.get(app);
        if (!entry) opened.set(app, (entry = openAppQueue(app, connection, plain)));
        const outcome = await outcomeOf(await entry, jobIdForIntent(intent.id));
        if (outcome) recovered.set(intent.id, outcome);
      }),
    );
  } finally {
    const entries = await Promise.allSettled(opened.values());
    await Promise.allSettled(entries.flatMap((entry) => (entry.status === 'fulfilled' ? [entry.value.events.close(), entry.value.queue.close()] : [])));
    plain.disconnect();
  }
  return recovered;
}

interface AppQueue {
  queue: Queue;
  events: QueueEvents;
}

/**
 * An app's queue, and its events read from the newest one written before any
 * job's state is read (see newestStreamEntry): a job that ended just after
 * its state was read as running would otherwise never be heard of, and the
 * resume would wait out the job's whole budget to call its outcome unknown.
 */
async function openAppQueue(app: string, connection: ReturnType<typeof connectionFromUrl>, plain: Redis): Promise<AppQueue> {
  const queue = new Queue(app, { connection, prefix: QUEUE_PREFIX });
  queue.on('error', () => undefined);
  queue.setMaxListeners(0);
  let lastEventId: string;
  try {
    lastEventId = await newestStreamEntry(plain, queue.keys.events);
  } catch (error) {
    await queue.close();
    throw error;
  }
  const events = new QueueEvents(app, { connection, prefix: QUEUE_PREFIX, lastEventId });
  events.on('error', () => undefined);
  events.setMaxListeners(0);
  return { queue, events };
}

async function outcomeOf({ queue, events }: AppQueue, jobId: string): Promise<CallOutcome | undefined> {
  const job: Job<CallJob, CallOutcome> | undefined = await Job.fromId(queue, jobId);
  if (!job) return undefined;
  const state = await job.getState();
  if (state === 'completed') return job.returnvalue ?? undefined;
  if (state === 'failed' || state === 'unknown') return undefined;
  const { timeoutMs, retry } = job.data;
  const budgetMs = timeoutMs * Math.max(1, retry.attempts) + WAIT_MARGIN_MS;
  return job.waitUntilFinished(events, budgetMs).then(
    (outcome: CallOutcome) => outcome,
    () => undefined,
  );
}
