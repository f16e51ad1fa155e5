import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { RunOwner } from './run-store.js';

/** An owner on another host that has not beaten for this long is taken for dead. */
export const REMOTE_OWNER_STALE_MS = 60_000;

/** How often a process that owns runs says it is alive. */
export const HEARTBEAT_EVERY_MS = 15_000;

/** This process, as the owner of the runs it executes. */
export function currentOwner(nowMs: number): RunOwner {
  return { host: hostname(), pid: process.pid, started: processStartOf(process.pid), heartbeatMs: nowMs };
}

/**
 * Whether the process that owns a run is still there. On this host: the pid
 * exists and (where the OS says) started when the owner did, so a reused pid
 * does not count. On another host, which cannot be asked: a recent heartbeat.
 */
export function isOwnerLive(owner: RunOwner, nowMs: number): boolean {
  if (owner.host !== hostname()) return nowMs - owner.heartbeatMs < REMOTE_OWNER_STALE_MS;
  if (owner.pid === process.pid) return true;
  if (!isProcessAlive(owner.pid)) return false;
  const started = processStartOf(owner.pid);
  return owner.started === null || started === null || started === owner.started;
}

/** Whether a process with this pid exists on this host (EPERM: it does, as another user's). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process's start time in clock ticks since boot (Linux /proc); null elsewhere. */
function processStartOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after the last `)`.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null; // field 22 of the whole line
  } catch {
    return null;
  }
}
