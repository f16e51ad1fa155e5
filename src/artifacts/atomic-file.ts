import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { storageError } from './storage-error.js';
import { writeText } from './text-chunks.js';

/** This process's part of temp file names (see writeFileAtomic), and how many it has made. */
const TEMP_TAG = randomUUID().slice(0, 8);
let tempCount = 0;

export interface AtomicWriteOptions {
  /** Permissions of the file, from the moment it exists (the umask applies). @default 0o666 */
  mode?: number;
  /** Permissions of the folders made for it (the umask applies). @default 0o777 */
  folderMode?: number;
  /** fsync the content before the rename: after a power cut, the old content or the new, never an empty file. @default false */
  durable?: boolean;
}

/**
 * Replaces `file` atomically: the content goes to a temp file beside it, then
 * a rename, so readers see the old content or the new, never half of it. The
 * folder is made when missing. `content` may be a function that writes to the
 * temp file's descriptor (a large JSON written in slices). On failure (disk
 * full, read-only folder, name too long) the temp file is removed, the old
 * file is left as it was, and a `storage` RunnerError says which path and why.
 */
export function writeFileAtomic(file: string, content: string | Buffer | ((fd: number) => void), options: AtomicWriteOptions = {}): void {
  // The pid, a random part drawn once per process and a count: several processes, on several hosts sharing a folder,
  // may replace the same file at once. It ends in `.tmp`, which file triggers never take for a finished file.
  const temp = `${file}.${process.pid}.${TEMP_TAG}${(tempCount++).toString(36)}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: options.folderMode });
    const fd = openSync(temp, 'wx', options.mode);
    try {
      if (typeof content === 'function') content(fd);
      // A string goes to the file as it is: Node encodes it into memory it frees at once, where writeFileSync would make a Buffer of it first.
      else if (typeof content === 'string') writeText(fd, content);
      else writeFileSync(fd, content);
      if (options.durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw storageError(error, file);
  }
}
