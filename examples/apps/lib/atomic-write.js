// Atomic file writes (temp file in the same folder, then rename) and per-file locks.
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Write `data` to `path` so readers see the old file or the new one, never half of one. */
export async function writeFileAtomic(path, data) {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temp, data);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

const tails = new Map();

/**
 * Run `task` after every earlier task on the same path has settled, so two
 * concurrent read-modify-write calls on one workbook cannot lose an update.
 */
export async function withFileLock(path, task) {
  const previous = tails.get(path) ?? Promise.resolve();
  const run = previous.then(task, task);
  const tail = run.catch(() => {});
  tails.set(path, tail);
  try {
    return await run;
  } finally {
    if (tails.get(path) === tail) tails.delete(path);
  }
}
