import { messageOf, RunnerError } from '../errors.js';

const REASONS: Record<string, { what: string; hint: string }> = {
  ENOSPC: { what: 'no space left on the device', hint: 'free some disk space, then `runner resume` the run' },
  EDQUOT: { what: 'the disk quota is used up', hint: 'free some space in your quota, then `runner resume` the run' },
  EROFS: { what: 'the file system is read-only', hint: 'point `artifacts` at a writable folder' },
  EACCES: { what: 'permission denied', hint: 'check the folder\'s owner and permissions' },
  EPERM: { what: 'operation not permitted', hint: 'check the folder\'s owner and permissions' },
  ENAMETOOLONG: { what: 'the name is too long for the file system', hint: 'use a shorter workflow name, step id or artifacts path' },
  EMFILE: { what: 'too many open files', hint: 'raise the open-file limit (ulimit -n)' },
  EIO: { what: 'an I/O error', hint: 'check the disk' },
};

/**
 * A failed write as a `storage` RunnerError naming the path and the reason in
 * plain words (`cannot write /a/run.json: no space left on the device (ENOSPC)`).
 */
export function storageError(error: unknown, path: string): RunnerError {
  if (error instanceof RunnerError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
  const reason = REASONS[code];
  const message = `cannot write ${path}: ${reason?.what ?? messageOf(error)} (${code})`;
  return new RunnerError('storage', message, { hint: reason?.hint, cause: error });
}
