import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { containsLargeString, isWellFormed, LARGE_STRING_CHARS, sliceText } from '../artifacts/large-strings.js';
import { mapDeep } from '../artifacts/record-values.js';

/** The store's table of large strings, in chunks (part of schema version 2). */
export const LARGE_VALUES_SCHEMA = `
CREATE TABLE IF NOT EXISTS large_values (
  run_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  item INTEGER NOT NULL,
  value_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  chunk NOT NULL, -- TEXT; a BLOB (UTF-16LE) for a slice with a lone surrogate
  PRIMARY KEY (run_id, step_id, item, value_id, seq)
);
`;

/** The record a large value belongs to: a step's own (item STEP_RECORD), a foreach item's (its index), or the run's. */
export interface ValueOwner {
  stepId: string;
  item: number;
}

export const STEP_RECORD = -1;
/** The run-level record (its inputs): an item number no step or item has. */
export const RUN_RECORD: ValueOwner = { stepId: '', item: -2 };

/**
 * What a record holds in place of a large string: ESC, `large:`, and the
 * value's id, which starts with a random nonce of the store that wrote it.
 * Apps cannot produce it (the recorder doubles every ESC in their values,
 * see secret-refs.ts), and it is only resolved when the same run and record
 * have a row of that id, so a look-alike stays the text it is.
 */
export const PLACEHOLDER = '\u001blarge:';

export interface StoredValue {
  id: string;
  /** The string stored under `id`; undefined when written by an earlier store (not known here). */
  text: string | undefined;
}

type Row = Record<string, unknown>;

/**
 * Keeps strings of 1 MiB or more out of the records' JSON: each is stored in
 * chunks of at most 1 MiB, and the record holds a placeholder. Serializing a
 * record with a 60 MB string for its row, and binding that to SQLite, cost
 * ~360 MB of transient memory; in chunks it costs a few MB. Every method runs
 * inside the caller's transaction, so chunks commit with the record that
 * refers to them.
 */
export class LargeValues {
  private readonly nonce = randomBytes(8).toString('hex');
  private counter = 0;
  /**
   * Per run this store has written: per record (ownerKey), the values in the
   * store. A record rewritten with the same string (`===`) does not write it
   * again: the recorder writes a step several times while it runs.
   */
  private readonly known = new Map<string, Map<string, StoredValue[]>>();
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      insert: db.prepare(`INSERT INTO large_values (run_id, step_id, item, value_id, seq, chunk) VALUES (?, ?, ?, ?, ?, ?)`),
      deleteValue: db.prepare(`DELETE FROM large_values WHERE run_id = ? AND step_id = ? AND item = ? AND value_id = ?`),
      deleteItemsFrom: db.prepare(`DELETE FROM large_values WHERE run_id = ? AND step_id = ? AND item >= ?`),
      deleteRun: db.prepare(`DELETE FROM large_values WHERE run_id = ?`),
      listRun: db.prepare(`SELECT DISTINCT step_id, item, value_id FROM large_values WHERE run_id = ?`),
      readRun: db.prepare(`SELECT step_id, item, value_id, chunk FROM large_values WHERE run_id = ? ORDER BY step_id, item, value_id, seq`),
    };
  }

  /**
   * `record` with each string of 1 MiB or more replaced by a placeholder, its
   * chunks written unless the record already has that very string stored;
   * the record's values it no longer holds are deleted.
   */
  externalize<T>(runId: string, owner: ValueOwner, record: T): T {
    const values = this.valuesOf(runId);
    const key = ownerKey(owner);
    const replaced = replaceLargeStrings(record, values.get(key), (text) => this.insert(runId, owner, text));
    if (!replaced) return record;
    for (const stale of replaced.stale) this.statements.deleteValue.run(runId, owner.stepId, owner.item, stale.id);
    if (replaced.kept.length > 0) values.set(key, replaced.kept);
    else values.delete(key);
    return replaced.record;
  }

  /** Deletes the values of a step's foreach items from index `count` on. */
  trimItems(runId: string, stepId: string, count: number): void {
    this.statements.deleteItemsFrom.run(runId, stepId, count);
    const values = this.known.get(runId);
    for (const key of values?.keys() ?? []) {
      const owner = ownerOf(key);
      if (owner.stepId === stepId && owner.item >= count) values!.delete(key);
    }
  }

  deleteRun(runId: string): void {
    this.statements.deleteRun.run(runId);
    this.known.delete(runId);
  }

  /**
   * Drops what this store remembers of a run (all runs without an id): after
   * a transaction that rolled back, or once the run has ended, so a
   * long-lived process does not keep its strings.
   */
  forget(runId?: string): void {
    if (runId === undefined) this.known.clear();
    else this.known.delete(runId);
  }

  /** Every large value of a run: per record (ownerKey), value id → string. */
  read(runId: string): Map<string, Map<string, string>> {
    const out = new Map<string, Map<string, string>>();
    let current: { key: string; id: string; parts: string[] } | undefined;
    const finish = () => {
      if (!current) return;
      const values = out.get(current.key) ?? new Map<string, string>();
      values.set(current.id, current.parts.join(''));
      out.set(current.key, values);
    };
    // Row by row: only the chunks of one value and the joined value are held at once.
    for (const row of this.statements.readRun.iterate(runId) as Iterable<Row>) {
      const key = ownerKey({ stepId: row.step_id as string, item: Number(row.item) });
      if (current?.key !== key || current.id !== row.value_id) {
        finish();
        current = { key, id: row.value_id as string, parts: [] };
      }
      current.parts.push(decodeChunk(row.chunk as string | Buffer));
    }
    finish();
    return out;
  }

  /** `record` with its placeholders replaced by the strings `values` (from `read`, for this record) has for them. */
  resolve<T>(record: T, values: Map<string, string> | undefined): T {
    return resolvePlaceholders(record, values);
  }

  private insert(runId: string, owner: ValueOwner, text: string): StoredValue {
    const id = `${this.nonce}-${(this.counter++).toString(36)}`;
    let seq = 0;
    for (const slice of sliceText(text)) this.statements.insert.run(runId, owner.stepId, owner.item, id, seq++, encodeChunk(slice));
    return { id, text };
  }

  /** What the store has of a run, read once per run from its ids (their strings are not read). */
  private valuesOf(runId: string): Map<string, StoredValue[]> {
    let values = this.known.get(runId);
    if (values) return values;
    values = new Map();
    for (const row of this.statements.listRun.all(runId) as Row[]) {
      const key = ownerKey({ stepId: row.step_id as string, item: Number(row.item) });
      values.set(key, [...(values.get(key) ?? []), { id: row.value_id as string, text: undefined }]);
    }
    this.known.set(runId, values);
    return values;
  }
}

/**
 * A chunk as SQLite keeps it: TEXT, bound as it is (no copy in the JS heap),
 * or, for the rare slice with a lone surrogate an app may have sent (UTF-8
 * has no form for one), a BLOB of its UTF-16 code units.
 */
function encodeChunk(slice: string): string | Buffer {
  return isWellFormed(slice) ? slice : Buffer.from(slice, 'utf16le');
}

function decodeChunk(chunk: string | Buffer): string {
  return typeof chunk === 'string' ? chunk : chunk.toString('utf16le');
}

/** A record's key in `read`'s result. */
export function ownerKey(owner: ValueOwner): string {
  return `${owner.item}:${owner.stepId}`;
}

function ownerOf(key: string): ValueOwner {
  const colon = key.indexOf(':');
  return { item: Number(key.slice(0, colon)), stepId: key.slice(colon + 1) };
}

/**
 * `record` with each string of 1 MiB or more replaced by a placeholder: a value
 * already stored for this record (`before`) is reused when it is that very
 * string, any other is stored through `insert`. Returns the values the record
 * now refers to and the ones it no longer does (`stale`, for the caller to
 * delete); undefined when the record neither has nor had a large string.
 */
export function replaceLargeStrings<T>(
  record: T,
  before: StoredValue[] | undefined,
  insert: (text: string) => StoredValue,
): { record: T; kept: StoredValue[]; stale: StoredValue[] } | undefined {
  const large = containsLargeString(record);
  if (!large && !before) return undefined;
  const unused = [...(before ?? [])];
  const kept: StoredValue[] = [];
  const placeholderFor = (text: string): string => {
    let value = kept.find((candidate) => candidate.text === text);
    if (!value) {
      const index = unused.findIndex((candidate) => candidate.text === text);
      value = index >= 0 ? unused.splice(index, 1)[0] : insert(text);
      kept.push(value);
    }
    return PLACEHOLDER + value.id;
  };
  const mapped = large ? mapDeep(record, (text) => (text.length >= LARGE_STRING_CHARS ? placeholderFor(text) : text)) : record;
  return { record: mapped, kept, stale: unused };
}

/** `record` with its placeholders replaced by the strings `values` (value id → string) has for them. */
export function resolvePlaceholders<T>(record: T, values: Map<string, string> | undefined): T {
  if (!values || values.size === 0) return record;
  return mapDeep(record, (text) => (text.startsWith(PLACEHOLDER) ? (values.get(text.slice(PLACEHOLDER.length)) ?? text) : text));
}
