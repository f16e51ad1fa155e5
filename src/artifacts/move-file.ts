import { copyFileSync, renameSync, rmSync } from 'node:fs';
import { storageError } from './storage-error.js';

/**
 * Moves a finished file to `to` so that `to` never exists half-written:
 * a rename, or across file systems (EXDEV) a copy beside `to` renamed into
 * place. The source is gone afterwards either way, also when the move
 * failed (a `storage` RunnerError naming `to`).
 */
export function moveFileAtomic(from: string, to: string): void {
  try {
    renameSync(from, to);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') {
      rmSync(from, { force: true });
      throw storageError(error, to);
    }
  }
  const temp = `${to}.${process.pid}.tmp`;
  try {
    copyFileSync(from, temp);
    renameSync(temp, to);
  } catch (error) {
    rmSync(temp, { force: true });
    throw storageError(error, to);
  } finally {
    rmSync(from, { force: true });
  }
}
