import type { RunRecord } from '../artifacts/run-record.js';
import { mapRecordValues } from '../artifacts/record-values.js';
import { RunnerError } from '../errors.js';
import { importRunFolders } from './import-runs.js';
import { currentOwner } from './run-owner.js';
import type { RunStore, StoredRun } from './run-store.js';
import { toDisplayForm } from './secret-refs.js';
import { SqliteRunStore } from './sqlite-run-store.js';

/**
 * Opens the run store of an artifacts folder; the first time, runs recorded
 * before the store existed are imported from their run.json files.
 */
export function openRunStore(artifacts: string, nowMs = Date.now()): SqliteRunStore {
  const store = new SqliteRunStore(artifacts);
  try {
    importRunFolders(store, currentOwner(nowMs));
  } catch (error) {
    store.close();
    throw error;
  }
  return store;
}

/** Opens the store, hands it to `use`, and closes it again. */
export async function withRunStore<T>(artifacts: string, use: (store: SqliteRunStore) => T | Promise<T>): Promise<T> {
  const store = openRunStore(artifacts);
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
