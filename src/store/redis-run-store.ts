import { join } from 'node:path';
import type { ItemRecord, RunRecord, RunStatus, StepRecord } from '../artifacts/run-record.js';
import { RunnerError } from '../errors.js';
import { ownerKey, RUN_RECORD, STEP_RECORD, type ValueOwner } from './large-values.js';
import { importRunFolders } from './import-runs.js';
import { hasImportedSqliteHistory, importSqliteHistory } from './redis-import.js';
import { readRedisDurability, type RedisDurability } from './redis-durability.js';
import { keyPrefixFor, RedisKeys, RUN_STATUSES } from './redis-keys.js';
import { decodeChunk, RedisLargeValues } from './redis-large-values.js';
import { REDIS_SCRIPTS } from './redis-scripts.js';
import { RedisSyncClient, redactUrl, valuesOf, type RedisCommand } from './redis-sync-client.js';
import { currentOwner } from './run-owner.js';
import { SqliteRunStore } from './sqlite-run-store.js';
import { answerInRecord, type ApprovalAnswer, type ApprovalResult } from './approval-answer.js';
import type { JournalEntry, RunChanges, RunFilter, RunOwner, RunStore, RunSummary, StoredRun } from './run-store.js';

/** Version of the key layout; a runner that finds a newer one refuses to touch it. */
const SCHEMA_VERSION = 1;

/** How long a durable write waits for its fsync or its replicas. */
const DURABLE_WAIT_MS = 10_000;

export interface RedisRunStoreOptions {
  /** The artifacts folder: run folders are always `<artifacts>/<workflow>/<id>`, never a path read from Redis. */
  artifacts: string;
  /** What tells projects apart on one Redis (the config folder); hashed into the key prefix. */
  namespace?: string;
  /** The whole key prefix, instead of one derived from `namespace`. */
  keyPrefix?: string;
  /** How long one round trip to Redis may take. @default 30000 */
  timeoutMs?: number;
  /**
   * Refuse to open unless durable writes survive a crash of Redis itself: AOF on
   * with `appendfsync always`, or WAITAOF (Redis 7.2+). @default false
   */
  requireFsync?: boolean;
  /**
   * Replicas that must acknowledge a durable write (WAIT) before it returns,
   * so a failover to a replica cannot lose an intent. @default 0
   */
  replicas?: number;
  /**
   * The first time a project opens its Redis store, copy the runs of its
   * SQLite store (and the run folders that predate it) into Redis. @default true
   */
  importLocalHistory?: boolean;
  /** Now, for the import's markers. @default Date.now() */
  nowMs?: number;
}

type Hash = Record<string, string>;

/**
 * Opens the run store shared through Redis at `url` (queue mode); the first
 * time for a project, copies the history of its SQLite store into it.
 */
export function openRedisRunStore(url: string, options: RedisRunStoreOptions): RedisRunStore {
  const store = new RedisRunStore(url, options);
  try {
    if (options.importLocalHistory !== false && !hasImportedSqliteHistory(store)) {
      const owner = currentOwner(options.nowMs ?? Date.now());
      const sqlite = new SqliteRunStore(options.artifacts);
      try {
        importRunFolders(sqlite, owner);
        importSqliteHistory(store, sqlite, owner);
      } finally {
        sqlite.close();
      }
    }
  } catch (error) {
    store.close();
    throw error;
  }
  return store;
}

/**
 * The run store on Redis, shared by every machine of a queue-mode cluster.
 * Same contract as SqliteRunStore: each `write` is one MULTI/EXEC; a `durable`
 * write returns only once Redis acknowledged it (and, where the server has
 * WAITAOF and AOF on, once it is fsynced). Ownership changes are Lua scripts.
 * The API is synchronous like the SQLite one: see redis-sync-client.ts.
 */
export class RedisRunStore implements RunStore {
  readonly artifacts: string;
  readonly keys: RedisKeys;
  /** What the server guarantees for acknowledged writes. */
  readonly durability: RedisDurability;
  private readonly client: RedisSyncClient;
  private readonly large: RedisLargeValues;
  private readonly replicas: number;

  constructor(readonly url: string, options: RedisRunStoreOptions) {
    this.artifacts = options.artifacts;
    this.replicas = options.replicas ?? 0;
    this.keys = new RedisKeys(options.keyPrefix ?? keyPrefixFor(options.namespace ?? options.artifacts));
    this.client = new RedisSyncClient(url, { timeoutMs: options.timeoutMs, scripts: REDIS_SCRIPTS });
    try {
      this.durability = readRedisDurability(this.client);
      if (options.requireFsync && !this.durability.fsyncedWrites) {
        throw new RunnerError('storage', `Redis at ${redactUrl(url)} does not fsync acknowledged writes (${this.durability.summary})`, {
          hint: 'set `appendonly yes` and `appendfsync always` on the Redis server (see docs/run-store-redis.md)',
        });
      }
      this.checkSchema();
    } catch (error) {
      this.client.close();
      throw error;
    }
    this.large = new RedisLargeValues(this.keys, (runId) => toObject(this.client.call('hgetall', this.keys.largeValues(runId))));
  }

  /** `imported`: read from a run.json; `ownerless`: no process holds it (copied from another store). */
  createRun(stored: StoredRun, owner: RunOwner, options: { imported?: boolean; ownerless?: boolean } = {}): void {
    const { run } = stored;
    const batch: RedisCommand[] = [];
    const record = this.large.externalize(run.id, RUN_RECORD, run, batch);
    const startedMs = Date.parse(run.startedAt) || 0;
    const hash = typeof run.trigger.hash === 'string' ? run.trigger.hash : undefined;
    const fields: (string | number)[] = ['id', run.id, 'workflow', run.workflow, 'startedAt', run.startedAt, 'startedMs', startedMs];
    fields.push('trigger', JSON.stringify(run.trigger), 'imported', options.imported ? 1 : 0, 'heartbeatMs', owner.heartbeatMs);
    if (hash !== undefined) fields.push('triggerHash', hash);
    if (!options.imported && !options.ownerless) fields.push('owner', ownerJson(owner), 'ownerId', ownerId(owner));
    batch.push(['hset', this.keys.run(run.id), ...fields]);
    this.pushRunUpdate(batch, run.id, record, startedMs);
    batch.push(
      ['zadd', this.keys.allRuns, startedMs, run.id],
      ['zadd', this.keys.runIds, 0, run.id],
      ['zadd', this.keys.byWorkflow(run.workflow), startedMs, run.id],
      ['sadd', this.keys.workflows, run.workflow],
    );
    if (hash !== undefined) batch.push(['zadd', this.keys.byTriggerHash(run.workflow, hash), startedMs, run.id]);
    stored.steps.forEach((step, position) => {
      this.pushStep(batch, run.id, position, step.record);
      for (const item of step.items ?? []) this.pushItem(batch, run.id, step.record.id, item);
    });
    const replies = this.forgetOnFailure(run.id, () => this.client.execIfAbsent(this.keys.run(run.id), batch));
    if (!replies) {
      this.large.forget(run.id);
      throw new RunnerError('internal', `run ${run.id} is already in the run store`);
    }
    valuesOf(replies, this.url);
    if (run.status !== 'running') this.large.forget(run.id);
  }

  write(changes: RunChanges, options: { durable?: boolean } = {}): void {
    const { runId } = changes;
    this.forgetOnFailure(runId, () => {
      const batch: RedisCommand[] = [];
      if (changes.run) this.pushRunUpdate(batch, runId, this.large.externalize(runId, RUN_RECORD, changes.run, batch), Date.parse(changes.run.startedAt) || 0);
      for (const step of changes.steps ?? []) {
        this.pushStep(batch, runId, step.position, step.record);
        if (step.itemCount !== undefined) {
          batch.push(['runnerTrimItems', this.keys.prefix, runId, step.itemCount, step.record.id]);
          this.large.trimItems(runId, step.record.id, step.itemCount);
        }
      }
      for (const { stepId, record } of changes.items ?? []) this.pushItem(batch, runId, stepId, record);
      for (const intent of changes.intents ?? []) {
        const entry = JSON.stringify(intent);
        batch.push(['hset', this.keys.journal(runId), intent.id, entry], ['hset', this.keys.openIntents(runId), intent.id, entry], ['hdel', this.keys.outcomes(runId), intent.id]);
      }
      for (const settled of changes.settled ?? []) {
        batch.push(['hdel', this.keys.openIntents(runId), settled.id], ['hset', this.keys.outcomes(runId), settled.id, JSON.stringify({ outcome: settled.outcome, endedAt: settled.endedAt })]);
      }
      if (batch.length === 0) return;
      valuesOf(this.client.exec({ kind: 'multi', commands: batch }), this.url);
      if (options.durable) this.waitForDurability();
    });
    // An ended run is written again only by a resume: no need to keep its large strings meanwhile.
    if (changes.run && changes.run.status !== 'running') this.large.forget(runId);
  }

  getRun(id: string): StoredRun | undefined {
    const reply = this.client.call('runnerGetRun', this.keys.prefix, id) as [string[], string[], [string, string[]][], string[]] | null;
    if (!reply) return undefined;
    const [runRow, stepRows, itemRows, largeRows] = reply;
    const row = toObject(runRow);
    const large = this.readLargeValues(id, toObject(largeRows));
    const parse = <T>(json: string, owner: ValueOwner): T => this.large.resolve(JSON.parse(json) as T, large.get(ownerKey(owner)));
    const run = { ...parse<Omit<RunRecord, 'steps'>>(row.record, RUN_RECORD), dir: this.dirOf(row.workflow, id) };
    const items = new Map<string, ItemRecord[]>();
    for (const [stepId, fields] of itemRows) {
      const list = Object.entries(toObject(fields)).map(([index, json]) => parse<ItemRecord>(json, { stepId, item: Number(index) }));
      items.set(stepId, list.sort((a, b) => a.index - b.index));
    }
    const steps = Object.entries(toObject(stepRows))
      .map(([stepId, json]) => ({ stepId, ...(JSON.parse(json) as { position: number; record: Omit<StepRecord, 'items'> }) }))
      .sort((a, b) => a.position - b.position)
      .map(({ stepId, record }) => {
        const resolved = this.large.resolve(record, large.get(ownerKey({ stepId, item: STEP_RECORD })));
        const stepItems = items.get(stepId);
        return stepItems ? { record: resolved, items: stepItems } : { record: resolved };
      });
    return { run, steps, imported: row.imported === '1' };
  }

  matchRunIds(prefix: string, limit: number): string[] {
    return this.client.call('zrevrangebylex', this.keys.runIds, `(${prefix}\u{10FFFF}`, `[${prefix}`, 'LIMIT', 0, limit) as string[];
  }

  listRuns(filter: RunFilter = {}): RunSummary[] {
    // Walk the smallest index that applies; the script checks the other filters run by run.
    const set =
      filter.workflow !== undefined ? this.keys.byWorkflow(filter.workflow) : filter.status !== undefined ? this.keys.byStatus(filter.status) : this.keys.allRuns;
    const rows = this.client.call(
      'runnerListRuns',
      this.keys.prefix,
      set,
      filter.sinceMs !== undefined ? filter.sinceMs : '-inf',
      filter.beforeMs !== undefined ? `(${filter.beforeMs}` : '+inf',
      filter.status ?? '',
      filter.workflow ?? '',
      filter.offset ?? 0,
      filter.limit ?? -1,
    ) as (string | null)[][];
    return rows.map(([id, workflow, status, trigger, startedAt, endedAt, durationMs]) =>
      this.summaryOf({ id: id!, workflow: workflow!, status: status!, trigger: trigger!, startedAt: startedAt!, ...(endedAt && { endedAt }), ...(durationMs && { durationMs }) }),
    );
  }

  openIntents(runId: string): JournalEntry[] {
    const entries = Object.values(toObject(this.client.call('hgetall', this.keys.openIntents(runId)))).map((json) => JSON.parse(json) as JournalEntry);
    return entries.sort((a, b) => (a.sentAt < b.sentAt ? -1 : a.sentAt > b.sentAt ? 1 : 0));
  }

  claimRun(id: string, owner: RunOwner, isLive: (holder: RunOwner) => boolean): { claimed: true } | { claimed: false; holder: RunOwner } {
    // Compare and set: read the holder, ask whether it lives, and set the owner only if the holder is still the same.
    for (;;) {
      const [json, heartbeatMs] = this.client.call('hmget', this.keys.run(id), 'owner', 'heartbeatMs') as (string | null)[];
      const holder = json ? { ...(JSON.parse(json) as Omit<RunOwner, 'heartbeatMs'>), heartbeatMs: Number(heartbeatMs ?? 0) } : null;
      if (holder && !(holder.host === owner.host && holder.pid === owner.pid) && isLive(holder)) return { claimed: false, holder };
      const set = this.client.call('runnerClaim', this.keys.prefix, id, json ?? '', ownerJson(owner), ownerId(owner), owner.heartbeatMs);
      if (set === 1) return { claimed: true };
    }
  }

  releaseRun(id: string, owner: RunOwner): void {
    this.client.call('runnerRelease', this.keys.prefix, id, ownerId(owner));
  }

  heartbeat(ids: string[], owner: RunOwner, nowMs: number): void {
    if (ids.length > 0) this.client.call('runnerHeartbeat', this.keys.prefix, ownerId(owner), nowMs, ...ids);
  }

  unfinishedRuns(workflows?: string[]): (RunSummary & { owner: RunOwner | null })[] {
    const ids = this.client.call('zrange', this.keys.byStatus('running'), 0, -1) as string[];
    if (ids.length === 0) return [];
    const rows = valuesOf(this.client.exec({ kind: 'pipeline', commands: ids.map((id) => ['hgetall', this.keys.run(id)]) }), this.url).map((fields) => toObject(fields));
    return rows
      .filter((row) => row.id !== undefined && (!workflows || workflows.includes(row.workflow)))
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((row) => ({
        ...this.summaryOf(row),
        owner: row.owner ? { ...(JSON.parse(row.owner) as Omit<RunOwner, 'heartbeatMs'>), heartbeatMs: Number(row.heartbeatMs ?? 0) } : null,
      }));
  }

  answerApproval(runId: string, stepId: string, answer: ApprovalAnswer): ApprovalResult {
    // Compare and set: decide on the record as read, write only if the run is still waiting and the record unchanged.
    for (;;) {
      const [status, json] = valuesOf(
        this.client.exec({ kind: 'multi', commands: [['hget', this.keys.run(runId), 'status'], ['hget', this.keys.steps(runId), stepId]] }),
        this.url,
      ) as (string | null)[];
      if (status === null || status === undefined) return { answered: false, reason: 'no-run' };
      const entry = json ? (JSON.parse(json) as { position: number; record: Omit<StepRecord, 'items'> }) : undefined;
      const result = answerInRecord(status as RunStatus, entry?.record, answer);
      if (!result.answered) return result;
      const next = JSON.stringify({ position: entry!.position, record: result.record });
      if (this.client.call('runnerSetIfSame', this.keys.prefix, runId, stepId, json!, next) === 1) return { answered: true, approval: result.approval };
    }
  }

  findRunByTriggerHash(workflow: string, hash: string): RunSummary | undefined {
    const [id] = this.client.call('zrevrange', this.keys.byTriggerHash(workflow, hash), 0, 0) as string[];
    if (id === undefined) return undefined;
    const row = toObject(this.client.call('hgetall', this.keys.run(id)));
    return row.id === undefined ? undefined : this.summaryOf(row);
  }

  workflowNames(): string[] {
    return (this.client.call('smembers', this.keys.workflows) as string[]).sort();
  }

  deleteRuns(ids: string[]): void {
    if (ids.length === 0) return;
    valuesOf(this.client.exec({ kind: 'multi', commands: ids.map((id) => ['runnerDeleteRun', this.keys.prefix, id]) }), this.url);
    for (const id of ids) this.large.forget(id);
  }

  /** A value in the store's own hash (import markers and the like). */
  getMeta(key: string): string | undefined {
    return (this.client.call('hget', this.keys.meta, key) as string | null) ?? undefined;
  }

  setMeta(key: string, value: string): void {
    this.client.call('hset', this.keys.meta, key, value);
  }

  /**
   * Claims meta field `key` for `holder` (one process among all machines) unless
   * another holder claimed it less than `staleMs` ago; true when claimed.
   */
  claimMeta(key: string, holder: string, nowMs: number, staleMs: number): boolean {
    return this.client.call('runnerClaimMeta', this.keys.prefix, key, holder, nowMs, staleMs) === 1;
  }

  close(): void {
    this.client.close();
  }

  private pushRunUpdate(batch: RedisCommand[], id: string, record: Omit<RunRecord, 'steps'>, startedMs: number): void {
    const key = this.keys.run(id);
    batch.push(['hset', key, 'status', record.status, 'record', JSON.stringify(record)]);
    batch.push(record.endedAt === null ? ['hdel', key, 'endedAt'] : ['hset', key, 'endedAt', record.endedAt]);
    batch.push(record.durationMs === undefined ? ['hdel', key, 'durationMs'] : ['hset', key, 'durationMs', record.durationMs]);
    for (const status of RUN_STATUSES) if (status !== record.status) batch.push(['zrem', this.keys.byStatus(status), id]);
    batch.push(['zadd', this.keys.byStatus(record.status), startedMs, id]);
  }

  private pushStep(batch: RedisCommand[], runId: string, position: number, record: Omit<StepRecord, 'items'>): void {
    const stored = this.large.externalize(runId, { stepId: record.id, item: STEP_RECORD }, record, batch);
    batch.push(['hset', this.keys.steps(runId), record.id, JSON.stringify({ position, record: stored })]);
  }

  private pushItem(batch: RedisCommand[], runId: string, stepId: string, item: ItemRecord): void {
    const stored = this.large.externalize(runId, { stepId, item: item.index }, item, batch);
    batch.push(['hset', this.keys.items(runId, stepId), item.index, JSON.stringify(stored)], ['sadd', this.keys.itemSteps(runId), stepId]);
  }

  /** Every large value of a run, per record (ownerKey): value id → string. */
  private readLargeValues(runId: string, index: Hash): Map<string, Map<string, string>> {
    const out = new Map<string, Map<string, string>>();
    const ids = Object.keys(index);
    if (ids.length === 0) return out;
    const lists = valuesOf(this.client.exec({ kind: 'pipeline', commands: ids.map((id) => ['lrange', this.keys.chunks(runId, id), 0, -1]) }), this.url);
    ids.forEach((id, i) => {
      const values = out.get(index[id]) ?? new Map<string, string>();
      values.set(id, (lists[i] as string[]).map(decodeChunk).join(''));
      out.set(index[id], values);
    });
    return out;
  }

  /** Waits until this connection's writes are fsynced to the AOF (WAITAOF, Redis 7.2+) and on `replicas` replicas (WAIT). */
  private waitForDurability(): void {
    if (this.durability.waitAof) {
      const [local] = this.client.call('waitaof', 1, 0, DURABLE_WAIT_MS) as number[];
      if (local < 1) throw new RunnerError('storage', `Redis did not fsync a durable write to its append-only file within ${DURABLE_WAIT_MS} ms`);
    }
    if (this.replicas > 0) {
      const acknowledged = this.client.call('wait', this.replicas, DURABLE_WAIT_MS) as number;
      if (acknowledged < this.replicas) {
        throw new RunnerError('storage', `only ${acknowledged} of ${this.replicas} Redis replicas acknowledged a durable write within ${DURABLE_WAIT_MS} ms`, {
          hint: 'check the replicas, or lower the number of replicas the run store waits for',
        });
      }
    }
  }

  private checkSchema(): void {
    const version = this.client.call('hget', this.keys.meta, 'schema') as string | null;
    if (version === null) this.client.call('hsetnx', this.keys.meta, 'schema', SCHEMA_VERSION);
    else if (Number(version) > SCHEMA_VERSION) {
      throw new RunnerError('internal', `the run store in Redis under ${this.keys.prefix} was written by a newer runner (schema ${version}; this one knows ${SCHEMA_VERSION})`, {
        hint: 'upgrade runner on this machine',
      });
    }
  }

  private forgetOnFailure<T>(runId: string, fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      this.large.forget(runId);
      throw error;
    }
  }

  /** A run's folder is always `<artifacts>/<workflow>/<id>`: never a path read back from data. */
  private dirOf(workflow: string, id: string): string {
    return join(this.artifacts, workflow, id);
  }

  private summaryOf(row: Hash): RunSummary {
    return {
      id: row.id,
      workflow: row.workflow,
      status: row.status as RunStatus,
      trigger: JSON.parse(row.trigger) as RunSummary['trigger'],
      startedAt: row.startedAt,
      endedAt: row.endedAt ?? null,
      ...(row.durationMs !== undefined && { durationMs: Number(row.durationMs) }),
      dir: this.dirOf(row.workflow, row.id),
    };
  }
}

function ownerJson(owner: RunOwner): string {
  return JSON.stringify({ host: owner.host, pid: owner.pid, started: owner.started });
}

/** What release and heartbeat compare: the same process on the same host. */
function ownerId(owner: RunOwner): string {
  return `${owner.host}\n${owner.pid}`;
}

/** A reply of HGETALL (ioredis gives an object; Lua gives a flat list) as an object. */
function toObject(reply: unknown): Hash {
  if (!Array.isArray(reply)) return (reply ?? {}) as Hash;
  const out: Hash = {};
  for (let i = 0; i + 1 < reply.length; i += 2) out[reply[i] as string] = reply[i + 1] as string;
  return out;
}
