import { isProcessAlive, listProcessStats, readProcessStat } from '../process-info.js';

/**
 * Every descendant pid of `pid`, children before grandchildren, read from
 * /proc. Servers launched through `npx` or a shell run as grandchildren, and
 * killing only the direct child would leave them behind. Empty where /proc is
 * not available.
 */
export function listDescendants(pid: number): number[] {
  const childrenOf = new Map<number, number[]>();
  for (const [child, fields] of listProcessStats() ?? []) {
    const parent = Number(fields[1]);
    const list = childrenOf.get(parent) ?? [];
    list.push(child);
    childrenOf.set(parent, list);
  }
  const result: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    for (const child of childrenOf.get(next) ?? []) {
      result.push(child);
      queue.push(child);
    }
  }
  return result;
}

/** Sends `signal` to each pid, ignoring ones that are already gone. */
export function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already exited.
    }
  }
}

/** True while a process with this pid exists and is not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  if (!isProcessAlive(pid)) return false;
  const fields = readProcessStat(pid);
  return fields === null || fields[0] !== 'Z'; // no /proc: kill(0) is all we know
}

/**
 * True while the process group `pgid` has a member that is not a zombie.
 * A member that exited stays a zombie until its parent reaps it, and an app
 * orphaned by a killed runner waits for the system's init to do that, which
 * in some containers is slow or never happens: such a group is gone in
 * every way that matters. Where /proc is not available, whether any member
 * exists at all.
 */
export function groupHasLiveMember(pgid: number): boolean {
  const processes = listProcessStats();
  if (!processes) return groupExists(pgid);
  // Fields: state, parent, process group.
  return processes.some(([, fields]) => Number(fields[2]) === pgid && fields[0] !== 'Z');
}

/** Whether any process, zombies included, is in the group `pgid` (its id is in use while one is). */
export function groupExists(pgid: number): boolean {
  return isProcessAlive(-pgid);
}

/** Signals every process in the group led by `pid`; false when the group is gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}
