import type { RunRecord } from '../artifacts/run-record.js';
import { mapRecordValues } from '../artifacts/record-values.js';
import { RunnerError } from '../errors.js';
import { importRunFolders } from './import-runs.js';
import { openRedisRunStore } from './redis-run-store.js';
import { currentOwner } from './run-owner.js';
import type { RunStore, StoredRun } from './run-store.js';
import { toDisplayForm } from './secret-refs.js';
import { SqliteRunStore } from './sqlite-run-store.js';

/** Where the run store is: SQLite under the artifacts folder, or Redis in queue mode (shared by every machine). */
export interface RunStoreLocation {
  artifacts: string;
  /** Queue mode's redis:// URL: the runs live in that Redis, so `runs`, `show` and `resume` work from any machine. */
  queue?: string;
}

/**
 * Opens the run store: SQLite under `artifacts` (importing run folders from
 * before the store once), or, in queue mode, the project's runs in Redis
 * (importing this machine's SQLite history once). A bare path means SQLite.
 */
export function openRunStore(where: string | RunStoreLocation, nowMs = Date.now()): RunStore {
  const location = typeof where === 'string' ? { artifacts: where } : where;
  if (location.queue) {
    // One namespace for every machine: each project has a Redis database of its own (its queues are not namespaced either).
    return openRedisRunStore(location.queue, { artifacts: location.artifacts, namespace: 'runner', nowMs });
  }
  const store = new SqliteRunStore(location.artifacts);
  try {
    importRunFolders(store, currentOwner(nowMs));
  } catch (error) {
    store.close();
    throw error;
  }
  return store;
}

/** Opens the store, hands it to `use`, and closes it again. */
export async function withRunStore<T>(where: string | RunStoreLocation, use: (store: RunStore) => T | Promise<T>): Promise<T> {
  const store = openRunStore(where);
  try {
    return await use(store);
  } finally {
    store.close();
  }
}

const ID_TEXT = /^[0-9a-f-]+$/;

/**
 * The run named `id`: its full id, a unique prefix of it, or `latest`.
 * Throws `not-found` (exit 2) when there is none, `usage` when the prefix is ambiguous.
 */
export function findRun(store: RunStore, artifacts: string, id: string): StoredRun & { id: string } {
  const ids = id === 'latest' ? store.listRuns({ limit: 1 }).map((run) => run.id) : ID_TEXT.test(id) ? store.matchRunIds(id, 10) : [];
  const exact = ids.find((candidate) => candidate === id) ?? (ids.length === 1 ? ids[0] : undefined);
  if (ids.length > 1 && !exact) {
    throw new RunnerError('usage', `run id \`${id}\` is ambiguous: ${ids.join(', ')}${ids.length === 10 ? ', …' : ''}`, { hint: 'give more of the id' });
  }
  const stored = exact === undefined ? undefined : store.getRun(exact);
  if (!stored) {
    throw new RunnerError('not-found', id === 'latest' ? `no runs recorded under ${artifacts}` : `no run \`${id}\` under ${artifacts}`, {
      hint: 'list runs with `runner runs`',
    });
  }
  return { ...stored, id: stored.run.id };
}

/** A stored run as one record, still in store form. */
export function assembleRecord(stored: StoredRun): RunRecord {
  return { ...stored.run, steps: stored.steps.map((step) => (step.items ? { ...step.record, items: step.items } : { ...step.record })) };
}

/** A stored run as people see it (run.json, `runs show`): secrets shown as `***`. */
export function displayRecord(stored: StoredRun): RunRecord {
  return mapRecordValues(assembleRecord(stored), toDisplayForm);
}
