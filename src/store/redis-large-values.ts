import { randomBytes } from 'node:crypto';
import { isWellFormed, sliceText } from '../artifacts/large-strings.js';
import { ownerKey, replaceLargeStrings, resolvePlaceholders, type StoredValue, type ValueOwner } from './large-values.js';
import type { RedisKeys } from './redis-keys.js';
import type { RedisCommand } from './redis-sync-client.js';

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
    const replaced = replaceLargeStrings(record, values.get(key), (text) => this.insert(runId, key, text, batch));
    if (!replaced) return record;
    for (const stale of replaced.stale) batch.push(['hdel', this.keys.largeValues(runId), stale.id], ['del', this.keys.chunks(runId, stale.id)]);
    if (replaced.kept.length > 0) values.set(key, replaced.kept);
    else values.delete(key);
    return replaced.record;
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
    return resolvePlaceholders(record, values);
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
