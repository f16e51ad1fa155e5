import { createHash } from 'node:crypto';
import type { FileEvent } from './file-settle.js';
import type { ScheduleTriggerRecord } from './events.js';

/**
 * Queue mode's hand-over of trigger firings between runner processes
 * (implemented on BullMQ by src/queue/trigger-queues.ts): each process offers
 * every firing it sees under a deterministic id, the first offer of an id
 * becomes the one job, and exactly one process consuming the queue takes it.
 */
export interface FiringHandoff {
  /** Offers a firing; a later offer of the same id on the same queue is a no-op. */
  offer(queue: string, id: string, data: object): Promise<void>;
  /** Takes this process's share of a queue's firings; a `take` that throws hands the firing back to the others. */
  consume(queue: string, take: (data: unknown, addedAtMs: number) => Promise<void>): Promise<void>;
  /** Stops taking firings; resolves once those being taken are done or handed back. */
  stopTaking(): Promise<void>;
  close(): Promise<void>;
}

/** What an occurrence's job carries: the schedule entry that offered it first, and the run's trigger record. */
export interface OccurrenceJob {
  key: string;
  trigger: ScheduleTriggerRecord;
}

/** What a watched file's job carries: enough for any process to claim and run it. */
export interface FileJob {
  event: FileEvent;
  path: string;
  /** The watched folder the file was found under (its claim folders go beside it). */
  base: string;
  stableAtMs: number;
  /** sha256 of the content, hex. */
  hash: string;
}

/** The queue of a workflow's occurrences. Workflow names have no `.`, app names neither: no clash with an app's queue. */
export function scheduleQueueName(workflow: string): string {
  return `schedule.${workflow}`;
}

/** The queue of a workflow's watched files. */
export function watchQueueName(workflow: string): string {
  return `watch.${workflow}`;
}

/** The job id of an occurrence: its occurrence id, `:` written as `-` (BullMQ ids cannot hold `:`). */
export function occurrenceJobId(occurrence: string): string {
  return occurrence.replaceAll(':', '-');
}

/**
 * The job id of a watched file: its path, content and inode change time, the
 * same for every process looking at the same file on shared storage. A file
 * dropped again (copied, moved back, rewritten) has a new ctime, so it is a new
 * firing; the content marker then decides as without a queue.
 */
export function fileJobId(path: string, hash: string, ctimeMs: number): string {
  return `file-${createHash('sha256').update(`${path}\0${hash}\0${ctimeMs}`).digest('hex').slice(0, 40)}`;
}
