import type { RedisRunStore } from './redis-run-store.js';
import type { RunOwner, RunStore } from './run-store.js';

const IMPORTED_KEY = 'imported-sqlite-store';
const IMPORTING_KEY = 'importing-sqlite-store';
/** A claim on the import older than this belongs to a process that died: another may do it. */
const IMPORT_CLAIM_STALE_MS = 10 * 60_000;

/**
 * Copies the runs of a project's SQLite store (which has the run folders of
 * earlier runners imported already) into its Redis store, once per project,
 * so `runner runs` keeps its history when queue mode is turned on. Runs that
 * were still running keep their owner and their open intents, so a later
 * `resume` still reports unknown outcomes. Returns how many runs it copied.
 */
export function importSqliteHistory(redis: RedisRunStore, sqlite: RunStore, by: RunOwner): number {
  if (hasImportedSqliteHistory(redis)) return 0;
  // One importer at a time across machines: a claim in the store's meta hash.
  if (!redis.claimMeta(IMPORTING_KEY, `${by.host} ${by.pid}`, by.heartbeatMs, IMPORT_CLAIM_STALE_MS)) return 0;
  const holders = new Map(sqlite.unfinishedRuns().map((run) => [run.id, run.owner]));
  let count = 0;
  for (const summary of sqlite.listRuns().reverse()) {
    if (redis.getRun(summary.id)) continue; // a run copied by an import that stopped half-way
    const stored = sqlite.getRun(summary.id);
    if (!stored) continue;
    const holder = holders.get(summary.id);
    redis.createRun(stored, holder ?? by, { imported: stored.imported, ownerless: !holder });
    const open = sqlite.openIntents(summary.id);
    if (open.length > 0) redis.write({ runId: summary.id, intents: open }, { durable: true });
    count++;
  }
  redis.setMeta(IMPORTED_KEY, new Date(by.heartbeatMs).toISOString());
  return count;
}

/** Whether the one-time copy is done (by any machine). */
export function hasImportedSqliteHistory(redis: RedisRunStore): boolean {
  return redis.getMeta(IMPORTED_KEY) !== undefined;
}
