import { rm } from 'node:fs/promises';
import type { RetentionPolicy } from '../config/types.js';
import { isOwnerLive } from './run-owner.js';
import type { RunStore, RunSummary } from './run-store.js';
import { messageOf } from '../errors.js';

/** What to prune: runs past an age or past a count, per workflow. */
export interface PruneOptions extends RetentionPolicy {
  /** Only this workflow's runs. */
  workflow?: string;
}

/**
 * The runs to delete, newest first: per workflow, those that started more
 * than `maxAgeMs` ago and those past the newest `maxRuns`. A run that a live
 * process is still executing, or one waiting for an approval, is never among them.
 */
export function selectRunsToPrune(store: RunStore, options: PruneOptions, nowMs: number): RunSummary[] {
  const workflows = options.workflow !== undefined ? [options.workflow] : store.workflowNames();
  const live = new Set(
    store
      .unfinishedRuns(workflows)
      .filter((run) => run.owner && isOwnerLive(run.owner, nowMs))
      .map((run) => run.id),
  );
  const chosen = new Map<string, RunSummary>();
  for (const workflow of workflows) {
    if (options.maxAgeMs !== undefined) {
      for (const run of store.listRuns({ workflow, beforeMs: nowMs - options.maxAgeMs })) chosen.set(run.id, run);
    }
    if (options.maxRuns !== undefined) {
      for (const run of store.listRuns({ workflow, offset: options.maxRuns })) chosen.set(run.id, run);
    }
  }
  return [...chosen.values()].filter((run) => !live.has(run.id) && run.status !== 'waiting').sort((a, b) => (a.id < b.id ? 1 : -1));
}

/** Deletes runs: their folders first, then their rows (a folder that cannot be removed keeps its row). */
export async function deleteRuns(store: RunStore, runs: RunSummary[]): Promise<{ deleted: RunSummary[]; failed: { run: RunSummary; error: string }[] }> {
  const deleted: RunSummary[] = [];
  const failed: { run: RunSummary; error: string }[] = [];
  for (const run of runs) {
    try {
      await rm(run.dir, { recursive: true, force: true });
      deleted.push(run);
    } catch (error) {
      failed.push({ run, error: messageOf(error) });
    }
  }
  store.deleteRuns(deleted.map((run) => run.id));
  return { deleted, failed };
}
