import { hostname } from 'node:os';
import { isProcessAlive, readProcessStart } from '../process-info.js';
import type { RunOwner } from './run-store.js';

/** An owner on another host that has not beaten for this long is taken for dead. */
export const REMOTE_OWNER_STALE_MS = 60_000;

/** How often a process that owns runs says it is alive. */
export const HEARTBEAT_EVERY_MS = 15_000;

/** This process, as the owner of the runs it executes. */
export function currentOwner(nowMs: number): RunOwner {
  return { host: hostname(), pid: process.pid, started: readProcessStart(process.pid), heartbeatMs: nowMs };
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
  const started = readProcessStart(owner.pid);
  return owner.started === null || started === null || started === owner.started;
}
