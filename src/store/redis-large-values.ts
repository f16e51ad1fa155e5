import { randomBytes } from 'node:crypto';
import { containsLargeString, isWellFormed, LARGE_STRING_CHARS, sliceText } from '../artifacts/large-strings.js';
import { mapDeep } from '../artifacts/record-values.js';
import { ownerKey, type ValueOwner } from './large-values.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisCommand } from './redis-sync-client.js';

/** What a record holds in place of a large string (the same form as the SQLite store's; see large-values.ts). */
const PLACEHOLDER = '\u001blarge:';

interface StoredValue {
  id: string;
  /** The string under `id`; undefined when another process wrote it. */
  text: string | undefined;
}

/**
 * Keeps strings of 1 MiB or more out of the records, as the SQLite store does:
 * each is a list of chunks of at most 1 MiB (`chunks:<run>:<value>`), indexed
 * in `large:<run>`, and the record holds a placeholder. No Redis value is ever
 * bigger than a chunk. The methods add their commands to the caller's batch,
 * so chunks commit in the same MULTI/EXEC as the record that refers to them.
 */
export class RedisLargeValues {
  private readonly nonce = randomBytes(8).toString('hex');
  private counter = 0;
  /** Per run this store has written: per record (ownerKey), its values in Redis. */
  private readonly known = new Map<string, Map<string, StoredValue[]>>();

  constructor(
    private readonly keys: RedisKeys,
    /** Reads `large:<run>` (value id → owner key), for a run this process has not written yet. */
    private readonly readIndex: (runId: string) => Record<string, string>,
  ) {}

  /** `record` with its large strings replaced by placeholders; adds the writes and deletes to `batch`. */
  externalize<T>(runId: string, owner: ValueOwner, record: T, batch: RedisCommand[]): T {
    const values = this.valuesOf(runId);
    const key = ownerKey(owner);
    const before = values.get(key);
    const large = containsLargeString(record);
    if (!large && !before) return record;
    const kept: StoredValue[] = [];
    const placeholderFor = (text: string): string => {
      let value = kept.find((candidate) => candidate.text === text);
      if (!value) {
        const index = before?.findIndex((candidate) => candidate.text === text) ?? -1;
        value = index >= 0 ? before!.splice(index, 1)[0]! : this.insert(runId, key, text, batch);
        kept.push(value);
      }
      return PLACEHOLDER + value.id;
    };
    const mapped = large ? mapDeep(record, (text) => (text.length >= LARGE_STRING_CHARS ? placeholderFor(text) : text)) : record;
    for (const stale of before ?? []) batch.push(['hdel', this.keys.largeValues(runId), stale.id], ['del', this.keys.chunks(runId, stale.id)]);
    if (kept.length > 0) values.set(key, kept);
    else values.delete(key);
    return mapped;
  }

  /** Forgets the values of items from `count` on (the trim script deletes them in Redis). */
  trimItems(runId: string, stepId: string, count: number): void {
    const values = this.known.get(runId);
    for (const key of values?.keys() ?? []) {
      const colon = key.indexOf(':');
      if (key.slice(colon + 1) === stepId && Number(key.slice(0, colon)) >= count) values!.delete(key);
    }
  }

  /** Drops what this store remembers of a run (all runs without an id). */
  forget(runId?: string): void {
    if (runId === undefined) this.known.clear();
    else this.known.delete(runId);
  }

  /** `record` with its placeholders replaced by the strings in `values` (value id → string). */
  resolve<T>(record: T, values: Map<string, string> | undefined): T {
    if (!values || values.size === 0) return record;
    return mapDeep(record, (text) => (text.startsWith(PLACEHOLDER) ? (values.get(text.slice(PLACEHOLDER.length)) ?? text) : text));
  }

  private insert(runId: string, owner: string, text: string, batch: RedisCommand[]): StoredValue {
    const id = `${this.nonce}-${(this.counter++).toString(36)}`;
    const chunks = this.keys.chunks(runId, id);
    batch.push(['del', chunks]);
    for (const slice of sliceText(text)) batch.push(['rpush', chunks, encodeChunk(slice)]);
    batch.push(['hset', this.keys.largeValues(runId), id, owner]);
    return { id, text };
  }

  private valuesOf(runId: string): Map<string, StoredValue[]> {
    let values = this.known.get(runId);
    if (values) return values;
    values = new Map();
    for (const [id, key] of Object.entries(this.readIndex(runId))) values.set(key, [...(values.get(key) ?? []), { id, text: undefined }]);
    this.known.set(runId, values);
    return values;
  }
}

/**
 * A chunk as Redis keeps it: `u` and the text (stored as UTF-8), or, for the
 * rare slice with a lone surrogate an app may have sent (UTF-8 has no form
 * for one), `b` and the base64 of its UTF-16 code units.
 */
export function encodeChunk(slice: string): string {
  return isWellFormed(slice) ? `u${slice}` : `b${Buffer.from(slice, 'utf16le').toString('base64')}`;
}

export function decodeChunk(chunk: string): string {
  return chunk.startsWith('b') ? Buffer.from(chunk.slice(1), 'base64').toString('utf16le') : chunk.slice(1);
}
