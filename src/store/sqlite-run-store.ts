import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ItemRecord, RunRecord, RunStatus, StepRecord } from '../artifacts/run-record.js';
import { messageOf, RunnerError } from '../errors.js';
import { LARGE_VALUES_SCHEMA, LargeValues, ownerKey, RUN_RECORD, STEP_RECORD } from './large-values.js';
import { answerInRecord, type ApprovalAnswer, type ApprovalResult } from './approval-answer.js';
import type { JournalEntry, RunChanges, RunFilter, RunOwner, RunStore, RunSummary, StoredRun } from './run-store.js';

/** The store's file under the artifacts folder. */
export const STORE_FILE = join('.runner', 'runs.db');

/** How long a write waits for another process's transaction before it gives up. */
const BUSY_TIMEOUT_MS = 30_000;

/** 2: large strings in `large_values` (a runner that knows only 1 would show their placeholders). */
const SCHEMA_VERSION = 2;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  workflow TEXT NOT NULL,
  status TEXT NOT NULL,
  started_at TEXT NOT NULL,
  started_ms INTEGER NOT NULL,
  ended_at TEXT,
  duration_ms INTEGER,
  trigger TEXT NOT NULL,
  record TEXT NOT NULL,
  imported INTEGER NOT NULL DEFAULT 0,
  owner_host TEXT,
  owner_pid INTEGER,
  owner_started TEXT,
  heartbeat_ms INTEGER
);
CREATE INDEX IF NOT EXISTS runs_by_workflow ON runs (workflow, id);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, id);
CREATE TABLE IF NOT EXISTS steps (
  run_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  status TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (run_id, step_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS items (
  run_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  status TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (run_id, step_id, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  item INTEGER,
  attempt INTEGER NOT NULL,
  uses TEXT NOT NULL,
  sent_at TEXT NOT NULL,
  outcome TEXT,
  ended_at TEXT
);
CREATE INDEX IF NOT EXISTS journal_open ON journal (run_id) WHERE outcome IS NULL;
${LARGE_VALUES_SCHEMA}`;

type Row = Record<string, unknown>;

/**
 * The run store on SQLite (better-sqlite3), one file per artifacts folder, in
 * WAL mode so readers never wait for the writer. Several runner processes may
 * share it: writes are short IMMEDIATE transactions and wait up to 30 s for
 * each other, so SQLITE_BUSY does not reach the user. Ordinary writes are
 * synced lazily (WAL, synchronous=NORMAL: safe against a crash of the runner,
 * not of the machine); `durable` writes are synced before they return.
 */
export class SqliteRunStore implements RunStore {
  private readonly db: Database.Database;
  private readonly statements;
  private readonly writeTransaction;
  private readonly large: LargeValues;

  constructor(readonly artifacts: string) {
    const file = join(artifacts, STORE_FILE);
    try {
      mkdirSync(join(artifacts, '.runner'), { recursive: true });
      this.db = retryWhileBusy(() => openStoreFile(file), Date.now() + BUSY_TIMEOUT_MS);
    } catch (error) {
      throw storeError(error, file);
    }
    const db = this.db;
    this.large = new LargeValues(db);
    this.statements = {
      insertRun: db.prepare(
        `INSERT INTO runs (id, workflow, status, started_at, started_ms, ended_at, duration_ms, trigger, record, imported, owner_host, owner_pid, owner_started, heartbeat_ms)
         VALUES (@id, @workflow, @status, @startedAt, @startedMs, @endedAt, @durationMs, @trigger, @record, @imported, @host, @pid, @started, @heartbeatMs)`,
      ),
      updateRun: db.prepare(`UPDATE runs SET status = @status, ended_at = @endedAt, duration_ms = @durationMs, record = @record WHERE id = @id`),
      upsertStep: db.prepare(
        `INSERT INTO steps (run_id, step_id, position, status, record) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (run_id, step_id) DO UPDATE SET position = excluded.position, status = excluded.status, record = excluded.record`,
      ),
      upsertItem: db.prepare(
        `INSERT INTO items (run_id, step_id, idx, status, record) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (run_id, step_id, idx) DO UPDATE SET status = excluded.status, record = excluded.record`,
      ),
      trimItems: db.prepare(`DELETE FROM items WHERE run_id = ? AND step_id = ? AND idx >= ?`),
      insertIntent: db.prepare(
        `INSERT OR REPLACE INTO journal (id, run_id, step_id, item, attempt, uses, sent_at) VALUES (@id, @runId, @stepId, @item, @attempt, @uses, @sentAt)`,
      ),
      settleIntent: db.prepare(`UPDATE journal SET outcome = ?, ended_at = ? WHERE id = ?`),
      openIntents: db.prepare(`SELECT * FROM journal WHERE run_id = ? AND outcome IS NULL ORDER BY sent_at`),
      getRun: db.prepare(`SELECT * FROM runs WHERE id = ?`),
      getSteps: db.prepare(`SELECT step_id, record FROM steps WHERE run_id = ? ORDER BY position`),
      getStep: db.prepare(`SELECT record FROM steps WHERE run_id = ? AND step_id = ?`).pluck(),
      runStatus: db.prepare(`SELECT status FROM runs WHERE id = ?`).pluck(),
      setStepRecord: db.prepare(`UPDATE steps SET record = ? WHERE run_id = ? AND step_id = ?`),
      getItems: db.prepare(`SELECT step_id, idx, record FROM items WHERE run_id = ? ORDER BY step_id, idx`),
      matchIds: db.prepare(`SELECT id FROM runs WHERE id >= ? AND id < ? ORDER BY id DESC LIMIT ?`).pluck(),
      owner: db.prepare(`SELECT owner_host, owner_pid, owner_started, heartbeat_ms FROM runs WHERE id = ?`),
      setOwner: db.prepare(`UPDATE runs SET owner_host = ?, owner_pid = ?, owner_started = ?, heartbeat_ms = ? WHERE id = ?`),
      release: db.prepare(`UPDATE runs SET owner_host = NULL, owner_pid = NULL, owner_started = NULL WHERE id = ? AND owner_host = ? AND owner_pid = ?`),
      heartbeat: db.prepare(`UPDATE runs SET heartbeat_ms = ? WHERE id = ? AND owner_host = ? AND owner_pid = ?`),
      deleteRun: db.prepare(`DELETE FROM runs WHERE id = ?`),
      deleteSteps: db.prepare(`DELETE FROM steps WHERE run_id = ?`),
      deleteItems: db.prepare(`DELETE FROM items WHERE run_id = ?`),
      deleteJournal: db.prepare(`DELETE FROM journal WHERE run_id = ?`),
      getMeta: db.prepare(`SELECT value FROM meta WHERE key = ?`).pluck(),
      syncFull: db.prepare(`PRAGMA synchronous = FULL`),
      syncNormal: db.prepare(`PRAGMA synchronous = NORMAL`),
      setMeta: db.prepare(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`),
    };
    this.writeTransaction = db.transaction((changes: RunChanges) => this.applyChanges(changes));
  }

  createRun(stored: StoredRun, owner: RunOwner, options: { imported?: boolean } = {}): void {
    const insert = this.db.transaction(() => {
      this.statements.insertRun.run({
        ...this.runColumns(stored.run),
        imported: options.imported ? 1 : 0,
        host: options.imported ? null : owner.host,
        pid: options.imported ? null : owner.pid,
        started: options.imported ? null : owner.started,
        heartbeatMs: owner.heartbeatMs,
      });
      stored.steps.forEach((step, position) => {
        this.upsertStep(stored.run.id, position, step.record);
        for (const item of step.items ?? []) this.upsertItem(stored.run.id, step.record.id, item);
      });
    });
    this.guard(() => this.forgetOnFailure(stored.run.id, () => insert.immediate()));
    if (stored.run.status !== 'running') this.large.forget(stored.run.id); // imported: never written again
  }

  write(changes: RunChanges, options: { durable?: boolean } = {}): void {
    this.guard(() =>
      this.forgetOnFailure(changes.runId, () => {
        if (!options.durable) return this.writeTransaction.immediate(changes);
        // WAL with synchronous=FULL syncs the log at this commit, and with it every earlier commit.
        this.statements.syncFull.run();
        try {
          this.writeTransaction.immediate(changes);
        } finally {
          this.statements.syncNormal.run();
        }
      }),
    );
    // An ended run is written again only by a resume: no need to keep its large strings meanwhile.
    if (changes.run && changes.run.status !== 'running') this.large.forget(changes.runId);
  }

  /**
   * Runs a write of one run; when it fails (rolled back), forgets which large
   * values that run has, since what it noted during the write never committed.
   */
  private forgetOnFailure<T>(runId: string | undefined, fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      this.large.forget(runId);
      throw error;
    }
  }

  private applyChanges(changes: RunChanges): void {
    const { runId } = changes;
    if (changes.run) {
      const columns = this.runColumns(changes.run);
      this.statements.updateRun.run({ id: runId, status: columns.status, endedAt: columns.endedAt, durationMs: columns.durationMs, record: columns.record });
    }
    for (const step of changes.steps ?? []) {
      this.upsertStep(runId, step.position, step.record);
      if (step.itemCount !== undefined) {
        this.statements.trimItems.run(runId, step.record.id, step.itemCount);
        this.large.trimItems(runId, step.record.id, step.itemCount);
      }
    }
    for (const { stepId, record } of changes.items ?? []) this.upsertItem(runId, stepId, record);
    for (const intent of changes.intents ?? []) this.statements.insertIntent.run(intent);
    for (const settled of changes.settled ?? []) this.statements.settleIntent.run(settled.outcome, settled.endedAt, settled.id);
  }

  private upsertStep(runId: string, position: number, record: Omit<StepRecord, 'items'>): void {
    const stored = this.large.externalize(runId, { stepId: record.id, item: STEP_RECORD }, record);
    this.statements.upsertStep.run(runId, record.id, position, record.status, JSON.stringify(stored));
  }

  private upsertItem(runId: string, stepId: string, item: ItemRecord): void {
    const stored = this.large.externalize(runId, { stepId, item: item.index }, item);
    this.statements.upsertItem.run(runId, stepId, item.index, item.status, JSON.stringify(stored));
  }

  /** The runs table's columns for a run; its large strings (inputs from an --inputs file) kept apart like a step's. */
  private runColumns(run: Omit<RunRecord, 'steps'>) {
    return runColumns(this.large.externalize(run.id, RUN_RECORD, run));
  }

  getRun(id: string): StoredRun | undefined {
    return this.guard(() =>
      this.db
        .transaction(() => {
          const row = this.statements.getRun.get(id) as Row | undefined;
          if (!row) return undefined;
          const large = this.large.read(id);
          const parse = <T>(json: string, stepId: string, item: number): T => this.large.resolve(JSON.parse(json) as T, large.get(ownerKey({ stepId, item })));
          const run = { ...parse<Omit<RunRecord, 'steps'>>(row.record as string, RUN_RECORD.stepId, RUN_RECORD.item), dir: this.dirOf(row) };
          const items = new Map<string, ItemRecord[]>();
          for (const item of this.statements.getItems.all(id) as Row[]) {
            const list = items.get(item.step_id as string) ?? [];
            list.push(parse<ItemRecord>(item.record as string, item.step_id as string, Number(item.idx)));
            items.set(item.step_id as string, list);
          }
          const steps = (this.statements.getSteps.all(id) as Row[]).map((step) => {
            const record = parse<Omit<StepRecord, 'items'>>(step.record as string, step.step_id as string, STEP_RECORD);
            const stepItems = items.get(step.step_id as string);
            return stepItems ? { record, items: stepItems } : { record };
          });
          return { run, steps, imported: row.imported === 1 };
        })
        .deferred(),
    );
  }

  matchRunIds(prefix: string, limit: number): string[] {
    return this.guard(() => this.statements.matchIds.all(prefix, `${prefix}\u{10FFFF}`, limit) as string[]);
  }

  listRuns(filter: RunFilter = {}): RunSummary[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.workflow !== undefined) { where.push('workflow = ?'); params.push(filter.workflow); }
    if (filter.status !== undefined) { where.push('status = ?'); params.push(filter.status); }
    if (filter.sinceMs !== undefined) { where.push('started_ms >= ?'); params.push(filter.sinceMs); }
    if (filter.beforeMs !== undefined) { where.push('started_ms < ?'); params.push(filter.beforeMs); }
    const sql =
      `SELECT id, workflow, status, trigger, started_at, ended_at, duration_ms FROM runs` +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY id DESC LIMIT ? OFFSET ?`;
    params.push(filter.limit ?? -1, filter.offset ?? 0);
    return this.guard(() => (this.db.prepare(sql).all(...params) as Row[]).map((row) => this.summaryOf(row)));
  }

  openIntents(runId: string): JournalEntry[] {
    return this.guard(() =>
      (this.statements.openIntents.all(runId) as Row[]).map((row) => ({
        id: row.id as string,
        runId: row.run_id as string,
        stepId: row.step_id as string,
        item: row.item === null ? null : Number(row.item),
        attempt: Number(row.attempt),
        uses: row.uses as string,
        sentAt: row.sent_at as string,
      })),
    );
  }

  claimRun(id: string, owner: RunOwner, isLive: (holder: RunOwner) => boolean): { claimed: true } | { claimed: false; holder: RunOwner } {
    return this.guard(() =>
      this.db
        .transaction(() => {
          const holder = ownerOf(this.statements.owner.get(id) as Row | undefined);
          if (holder && !(holder.host === owner.host && holder.pid === owner.pid) && isLive(holder)) return { claimed: false as const, holder };
          this.statements.setOwner.run(owner.host, owner.pid, owner.started, owner.heartbeatMs, id);
          return { claimed: true as const };
        })
        .immediate(),
    );
  }

  releaseRun(id: string, owner: RunOwner): void {
    this.guard(() => this.statements.release.run(id, owner.host, owner.pid));
  }

  heartbeat(ids: string[], owner: RunOwner, nowMs: number): void {
    this.guard(() => this.db.transaction(() => ids.forEach((id) => this.statements.heartbeat.run(nowMs, id, owner.host, owner.pid))).immediate());
  }

  unfinishedRuns(workflows?: string[]): (RunSummary & { owner: RunOwner | null })[] {
    return this.guard(() =>
      (this.db.prepare(`SELECT * FROM runs WHERE status = 'running' ORDER BY id`).all() as Row[])
        .filter((row) => !workflows || workflows.includes(row.workflow as string))
        .map((row) => ({ ...this.summaryOf(row), owner: ownerOf(row) })),
    );
  }

  answerApproval(runId: string, stepId: string, answer: ApprovalAnswer): ApprovalResult {
    return this.guard(() =>
      this.db
        .transaction((): ApprovalResult => {
          const status = this.statements.runStatus.get(runId) as RunStatus | undefined;
          if (status === undefined) return { answered: false, reason: 'no-run' };
          const json = this.statements.getStep.get(runId, stepId) as string | undefined;
          // The stored record keeps its large strings as placeholders: only `approval` changes, so they stay as they are.
          const result = answerInRecord(status, json === undefined ? undefined : (JSON.parse(json) as Omit<StepRecord, 'items'>), answer);
          if (!result.answered) return result;
          this.statements.setStepRecord.run(JSON.stringify(result.record), runId, stepId);
          return { answered: true, approval: result.approval };
        })
        .immediate(),
    );
  }

  deleteRuns(ids: string[]): void {
    this.guard(() =>
      this.db
        .transaction(() => {
          for (const id of ids) {
            this.large.deleteRun(id);
            this.statements.deleteItems.run(id);
            this.statements.deleteSteps.run(id);
            this.statements.deleteJournal.run(id);
            this.statements.deleteRun.run(id);
          }
        })
        .immediate(),
    );
  }

  /** The newest run of `workflow` whose trigger has this content hash (`sha256:<hex>`). */
  findRunByTriggerHash(workflow: string, hash: string): RunSummary | undefined {
    return this.guard(() => {
      const row = this.db
        .prepare(`SELECT id, workflow, status, trigger, started_at, ended_at, duration_ms FROM runs WHERE workflow = ? AND json_extract(trigger, '$.hash') = ? ORDER BY id DESC LIMIT 1`)
        .get(workflow, hash) as Row | undefined;
      return row ? this.summaryOf(row) : undefined;
    });
  }

  /** Every workflow that has runs. */
  workflowNames(): string[] {
    return this.guard(() => this.db.prepare(`SELECT DISTINCT workflow FROM runs ORDER BY workflow`).pluck().all() as string[]);
  }

  /** A value in the store's own key/value table (import markers and the like). */
  getMeta(key: string): string | undefined {
    return this.guard(() => this.statements.getMeta.get(key) as string | undefined);
  }

  setMeta(key: string, value: string): void {
    this.guard(() => this.statements.setMeta.run(key, value));
  }

  /** Runs `fn` in one IMMEDIATE transaction (other writers wait). */
  inTransaction<T>(fn: () => T): T {
    return this.guard(() => this.forgetOnFailure(undefined, () => this.db.transaction(fn).immediate()));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** A run's folder is always `<artifacts>/<workflow>/<id>`: never a path read back from data. */
  private dirOf(row: Row): string {
    return join(this.artifacts, row.workflow as string, row.id as string);
  }

  private summaryOf(row: Row): RunSummary {
    return {
      id: row.id as string,
      workflow: row.workflow as string,
      status: row.status as RunStatus,
      trigger: JSON.parse(row.trigger as string) as RunSummary['trigger'],
      startedAt: row.started_at as string,
      endedAt: (row.ended_at as string | null) ?? null,
      ...(typeof row.duration_ms === 'number' && { durationMs: row.duration_ms }),
      dir: this.dirOf(row),
    };
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw storeError(error, join(this.artifacts, STORE_FILE));
    }
  }
}

function runColumns(run: Omit<RunRecord, 'steps'>) {
  return {
    id: run.id,
    workflow: run.workflow,
    status: run.status,
    startedAt: run.startedAt,
    startedMs: Date.parse(run.startedAt) || 0,
    endedAt: run.endedAt,
    durationMs: run.durationMs ?? null,
    trigger: JSON.stringify(run.trigger),
    record: JSON.stringify(run),
  };
}

function ownerOf(row: Row | undefined): RunOwner | null {
  if (!row || row.owner_pid === null || row.owner_pid === undefined) return null;
  return {
    host: row.owner_host as string,
    pid: Number(row.owner_pid),
    started: (row.owner_started as string | null) ?? null,
    heartbeatMs: Number(row.heartbeat_ms ?? 0),
  };
}

/**
 * Opens the store's file in WAL mode, with the schema in place. SQLite waits
 * (up to the busy timeout) for a lock another process holds, except where
 * waiting could deadlock: two processes that open a new file at once both
 * read it and both want to switch it to WAL, and one of them gets SQLITE_BUSY
 * at once. `retryWhileBusy` opens again in that case.
 */
function openStoreFile(file: string): Database.Database {
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // Most opens find the schema in place: check with a read before taking the write lock.
    if (schemaVersion(db) !== SCHEMA_VERSION) db.transaction(() => {
      db.exec(SCHEMA);
      const version = db.prepare(`SELECT value FROM meta WHERE key = 'schema'`).pluck().get() as string | undefined;
      if (version === undefined) db.prepare(`INSERT INTO meta (key, value) VALUES ('schema', ?)`).run(String(SCHEMA_VERSION));
      // Older files get the tables they lack from SCHEMA above (CREATE ... IF NOT EXISTS); their rows stay as they are.
      else if (Number(version) < SCHEMA_VERSION) db.prepare(`UPDATE meta SET value = ? WHERE key = 'schema'`).run(String(SCHEMA_VERSION));
      else if (Number(version) > SCHEMA_VERSION) {
        throw new RunnerError('internal', `the run store ${file} was written by a newer runner (schema ${version}; this one knows ${SCHEMA_VERSION})`, {
          hint: 'upgrade runner, or point `artifacts` at another folder',
        });
      }
    }).immediate();
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The schema version the file says it has; undefined for a new file. */
function schemaVersion(db: Database.Database): number | undefined {
  try {
    const value = db.prepare(`SELECT value FROM meta WHERE key = 'schema'`).pluck().get() as string | undefined;
    return value === undefined ? undefined : Number(value);
  } catch {
    return undefined; // no meta table yet
  }
}

/**
 * Runs `open` again while it fails with SQLITE_BUSY, after a short pause that
 * grows (10 ms to 200 ms, jittered so two processes do not meet again), until
 * `deadlineMs` (a `Date.now()` value); then the last failure is thrown.
 */
export function retryWhileBusy<T>(open: () => T, deadlineMs: number, pause: (ms: number) => void = sleepSync): T {
  for (let attempt = 0; ; attempt++) {
    try {
      return open();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || Date.now() >= deadlineMs) throw error;
      pause(Math.min(10 * 2 ** attempt, 200) * (0.5 + Math.random()));
    }
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** SQLite's failures as RunnerErrors that say which file and what to do. */
function storeError(error: unknown, file: string): unknown {
  if (error instanceof RunnerError) return error;
  const code = (error as { code?: string }).code ?? '';
  if (!code.startsWith('SQLITE_') && !(error instanceof Error && /sqlite|database/i.test(error.message))) return error;
  const reason = code === 'SQLITE_FULL' ? 'no space left on the device' : messageOf(error);
  const hint =
    code === 'SQLITE_FULL'
      ? 'free some disk space; runs already recorded are kept'
      : code.startsWith('SQLITE_READONLY') || code === 'SQLITE_CANTOPEN'
        ? `check that ${file} and its folder are writable`
        : code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB'
          ? `the file is damaged; move it away to start a new history (run folders are kept)`
          : code === 'SQLITE_BUSY'
            ? 'another runner process held the store for more than 30 s'
            : undefined;
  return new RunnerError('storage', `run store ${file}: ${reason} (${code || 'error'})`, { hint, cause: error });
}
