import { existsSync, readFileSync } from 'node:fs';

/** The non-empty lines of a file, or none when it does not exist. */
export function linesOf(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** SIGKILLs every pid listed in `file`, one per line: apps of a SIGKILLed worker outlive it. */
export function killListedPids(file: string): void {
  for (const pid of linesOf(file).map(Number)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
