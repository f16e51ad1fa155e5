import { readFileSync } from 'node:fs';

// What the OS says about a process on this host: whether it exists, and when
// it started. A pid alone can be reused; a pid with its start time names one process.

/** Whether a process with this pid exists on this host (EPERM: it does, as another user's). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process's start time in clock ticks since boot (Linux /proc); null elsewhere or when it is gone. */
export function readProcessStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after the last `)`.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null; // field 22 of the whole line
  } catch {
    return null;
  }
}
