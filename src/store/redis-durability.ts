import type { RedisSyncClient } from './redis-sync-client.js';

/** What a Redis server promises about a write it has acknowledged. */
export interface RedisDurability {
  /** Append-only file on. */
  aof: boolean;
  /** `appendfsync` (`always`, `everysec`, `no`), or `unknown` where CONFIG is not allowed (managed Redis). */
  appendfsync: string;
  /** The server has WAITAOF (7.2+) and AOF on: a durable write can wait for its fsync. */
  waitAof: boolean;
  /** An acknowledged durable write survives a crash of the Redis machine. */
  fsyncedWrites: boolean;
  /** One line for messages and `--verbose` output. */
  summary: string;
}

/**
 * Asks the server how it persists writes. Intents must survive a crash of
 * Redis, not only of the runner: that takes AOF with `appendfsync always`
 * (fsync before each reply), or WAITAOF, which the store then sends after
 * each durable write. With `everysec` up to a second of acknowledged writes
 * can be lost when the Redis machine fails (a Redis process crash alone
 * loses nothing the kernel already has).
 */
export function readRedisDurability(client: RedisSyncClient): RedisDurability {
  const persistence = parseInfo(client.call('info', 'persistence') as string);
  const server = parseInfo(client.call('info', 'server') as string);
  const aof = persistence.aof_enabled === '1';
  let appendfsync = 'unknown';
  try {
    const reply = client.call('config', 'get', 'appendfsync') as string[] | Record<string, string>;
    appendfsync = (Array.isArray(reply) ? reply[1] : reply.appendfsync) ?? 'unknown';
  } catch {
    // CONFIG is often disabled on managed Redis: keep `unknown`
  }
  const waitAof = aof && isAtLeast(server.redis_version ?? '0', [7, 2]);
  const fsyncedWrites = aof && (appendfsync === 'always' || waitAof);
  const summary = aof ? `appendonly yes, appendfsync ${appendfsync}${waitAof ? ', WAITAOF' : ''}` : 'appendonly no';
  return { aof, appendfsync, waitAof, fsyncedWrites, summary };
}

function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) out[line.slice(0, colon)] = line.slice(colon + 1).trim();
  }
  return out;
}

function isAtLeast(version: string, [major, minor]: [number, number]): boolean {
  const [a = 0, b = 0] = version.split('.').map(Number);
  return a > major || (a === major && b >= minor);
}
