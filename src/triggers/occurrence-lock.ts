import { hostname } from 'node:os';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { STATE_FOLDER } from './excluded-paths.js';
import { createExclusive } from './exclusive-file.js';

/** Locks of occurrences older than this are removed by `pruneOccurrenceLocks`. */
export const LOCK_RETENTION_MS = 24 * 60 * 60 * 1000;

/** The deterministic id of one scheduled fire: `<workflow>@<scheduled time, ISO UTC>`. */
export function occurrenceId(workflow: string, scheduledMs: number): string {
  return `${workflow}@${new Date(scheduledMs).toISOString()}`;
}

/** `<artifacts>/.runner/locks`. */
export function locksFolder(artifacts: string): string {
  return join(artifacts, STATE_FOLDER, 'locks');
}

/** The lock file of an occurrence id; `:` becomes `-` so the name is valid on every file system. */
export function lockFileOf(folder: string, id: string): string {
  return join(folder, id.replaceAll(':', '-'));
}

/**
 * Takes the lock of one occurrence: true for exactly one caller, whichever
 * runner process (sharing the artifacts folder) asks first. The lock is never
 * released: the occurrence happened, and a second process must not repeat it.
 */
export async function lockOccurrence(folder: string, id: string, nowMs: number): Promise<boolean> {
  const owner = { id, pid: process.pid, host: hostname(), lockedAt: new Date(nowMs).toISOString() };
  return createExclusive(lockFileOf(folder, id), JSON.stringify(owner) + '\n');
}

/** Removes locks of occurrences scheduled before `nowMs - retentionMs`; returns how many. */
export async function pruneOccurrenceLocks(folder: string, nowMs: number, retentionMs = LOCK_RETENTION_MS): Promise<number> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const scheduledMs = scheduledTimeOfLock(name);
    if (scheduledMs === undefined || scheduledMs >= nowMs - retentionMs) continue;
    await rm(join(folder, name), { force: true });
    removed++;
  }
  return removed;
}

/** The scheduled time in a lock file name (`wf@2026-03-29T01-00-00.000Z`). */
export function scheduledTimeOfLock(name: string): number | undefined {
  const at = name.lastIndexOf('@');
  if (at === -1) return undefined;
  const stamp = name.slice(at + 1).replace(/T(\d\d)-(\d\d)-(\d\d)/, 'T$1:$2:$3');
  const ms = Date.parse(stamp);
  return Number.isNaN(ms) ? undefined : ms;
}
