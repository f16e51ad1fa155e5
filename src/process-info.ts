import { readdirSync, readFileSync } from 'node:fs';

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
  return readProcessStat(pid)?.[19] ?? null; // field 22 of the whole line
}

/**
 * The fields of /proc/PID/stat after the command name (state, parent, process
 * group, …, so field N of the whole line is at N - 3); null elsewhere or when
 * the process is gone. The command name may hold spaces and parentheses, so
 * the fields are counted from the last `)`.
 */
export function readProcessStat(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Every process on this host with its stat fields (see readProcessStat); null where /proc is not available. */
export function listProcessStats(): [pid: number, fields: string[]][] | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const result: [number, string[]][] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = readProcessStat(entry); // null: it ended while we looked
    if (fields) result.push([Number(entry), fields]);
  }
  return result;
}
