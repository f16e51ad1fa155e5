// Measures what one durable commit's fsync costs on a filesystem right now:
// append one 4 KiB page to a file and fsync it, as SQLite does to its WAL at
// a `synchronous=FULL` commit.
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { median, round } from './stats.mjs';

/** Median microseconds of one 4 KiB append + fsync under `parent`, over `count` of them. */
export function probeFsync(parent, count = 200) {
  const dir = mkdtempSync(join(parent, 'fsync-probe-'));
  const fd = openSync(join(dir, 'wal'), 'a');
  const page = Buffer.alloc(4096, 1);
  const times = [];
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      writeSync(fd, page);
      fsyncSync(fd);
      times.push(performance.now() - started);
    }
    return round(median(times) * 1000, 0);
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}
