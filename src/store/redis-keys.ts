import { createHash } from 'node:crypto';
import type { RunStatus } from '../artifacts/run-record.js';

/** Every run status, each with its index set (runnerDeleteRun in redis-scripts.ts lists them too). */
export const RUN_STATUSES: readonly RunStatus[] = ['running', 'waiting', 'succeeded', 'failed', 'cancelled'];

/**
 * The prefix of every key of one project: `runner:{<hash>}:`, the hash of its
 * namespace (the config folder). The braces make it a Redis Cluster hash tag,
 * so all keys of a project share one slot and scripts may touch any of them.
 */
export function keyPrefixFor(namespace: string): string {
  return `runner:{${createHash('sha256').update(namespace).digest('hex').slice(0, 16)}}:`;
}

/**
 * The key layout of the Redis run store (docs/run-store-redis.md). Script
 * bodies build a few of these names themselves from the same prefix: keep them
 * in step with redis-scripts.ts.
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  /** Hash: the run's columns (workflow, status, startedMs, record, owner…). */
  run(id: string): string {
    return `${this.prefix}run:${id}`;
  }
  /** Hash: step id → `{ position, record }`. */
  steps(id: string): string {
    return `${this.prefix}steps:${id}`;
  }
  /** Set: ids of the steps that have foreach items. */
  itemSteps(id: string): string {
    return `${this.prefix}itemsteps:${id}`;
  }
  /** Hash: item index → item record. */
  items(id: string, stepId: string): string {
    return `${this.prefix}items:${id}:${stepId}`;
  }
  /** Hash: intent id → journal entry (every intent ever recorded). */
  journal(id: string): string {
    return `${this.prefix}journal:${id}`;
  }
  /** Hash: intent id → journal entry, for intents without an outcome. */
  openIntents(id: string): string {
    return `${this.prefix}open:${id}`;
  }
  /** Hash: intent id → `{ outcome, endedAt }`. */
  outcomes(id: string): string {
    return `${this.prefix}outcomes:${id}`;
  }
  /** Hash: large value id → the record it belongs to (`<item>:<stepId>`). */
  largeValues(id: string): string {
    return `${this.prefix}large:${id}`;
  }
  /** List: a large value's chunks, each at most 1 MiB of text. */
  chunks(id: string, valueId: string): string {
    return `${this.chunkPrefix(id)}${valueId}`;
  }
  chunkPrefix(id: string): string {
    return `${this.prefix}chunks:${id}:`;
  }
  /** Sorted set of every run id, score = start time (ms). */
  get allRuns(): string {
    return `${this.prefix}runs`;
  }
  /** Sorted set of every run id, all scores 0: ids in lexical order for prefix look-ups. */
  get runIds(): string {
    return `${this.prefix}ids`;
  }
  byWorkflow(workflow: string): string {
    return `${this.prefix}runs:wf:${workflow}`;
  }
  byStatus(status: string): string {
    return `${this.prefix}runs:status:${status}`;
  }
  /** Sorted set of the runs of `workflow` started by a file of this content hash. */
  byTriggerHash(workflow: string, hash: string): string {
    return `${this.prefix}runs:hash:${workflow}:${hash}`;
  }
  /** Set of workflow names that have runs. */
  get workflows(): string {
    return `${this.prefix}workflows`;
  }
  /** Hash: the store's own markers (schema version, imports). */
  get meta(): string {
    return `${this.prefix}meta`;
  }
}
