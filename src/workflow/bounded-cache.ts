// A Map used as a cache that empties itself when full.

// Texts come from workflow files, so the caches stay small; the cap only bounds
// memory in a long-lived `watch` process that reloads edited workflows.
const CACHE_LIMIT = 10_000;

/** Stores `value` under `key`, first emptying the cache when it is full; returns `value`. */
export function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}
