import type { AppRegistry } from '../apps/registry.js';
import type { RunnerConfig } from '../config/types.js';
import { RunnerError, type Diagnostic } from '../errors.js';
import type { Workflow } from '../workflow/types.js';
import { compareWithLock } from './compare.js';
import { lockEntriesFor, usedTools } from './entries.js';
import { formatDrift, showValue } from './format.js';
import { reachedApps, readLiveApps } from './live-apps.js';
import { lockFilePath, readLockFile } from './lock-file.js';
import type { Drift, LockFile } from './types.js';

/** What a check against the lock found: every drift, and the lockfile compared with. */
export interface LockCheck {
  file: string;
  lock: LockFile;
  drifts: Drift[];
}

/**
 * Compares the tools the workflows call with the config's lockfile, as the
 * apps list them now (connecting them if needed; an unreachable app is left
 * to the steps that need it). Undefined when there is no lockfile: then
 * nothing is checked.
 */
export async function findLockDrift(options: { config: RunnerConfig; workflows: readonly Workflow[]; apps: AppRegistry; signal?: AbortSignal }): Promise<LockCheck | undefined> {
  const file = lockFilePath(options.config);
  const lock = await readLockFile(file);
  if (!lock) return undefined;
  const used = usedTools(options.workflows);
  const live = reachedApps(await readLiveApps(options.apps, used.keys(), options.signal));
  return { file, lock, drifts: compareWithLock(lock, lockEntriesFor(used, live), used) };
}

/**
 * The check a run makes before its first call: throws a `lock-drift`
 * RunnerError (exit 2) with the diff when any drift stops it; else resolves
 * with the check, whose drifts stop nothing (a new server version: a
 * warning). Undefined when there is no lockfile.
 */
export async function assertNoLockDrift(options: Parameters<typeof findLockDrift>[0]): Promise<LockCheck | undefined> {
  const check = await findLockDrift(options);
  if (check?.drifts.some((drift) => drift.stops)) throw lockDriftError(check);
  return check;
}

/** The error a run stops with: the diff worst first, and how to accept it. */
export function lockDriftError(check: LockCheck): RunnerError {
  const stopping = check.drifts.filter((drift) => drift.stops).length;
  const what = stopping === 1 ? 'one change stops' : `${stopping} changes stop`;
  return new RunnerError('lock-drift', `the tools this run calls changed since ${check.file} was written: ${what} the run; nothing was sent:\n\n${formatDrift(check.drifts)}`, {
    hint: `review the changes; if they are expected, accept them with \`runner lock --update\` (it rewrites ${check.file})`,
    details: check.drifts,
  });
}

/** A drift that stops nothing, as a warning a run prints (`notes: server version changed: "1.0.0" → "1.1.0"`). */
export function driftWarning(drift: Drift): Diagnostic {
  const name = drift.tool === undefined ? drift.app : `${drift.app}.${drift.tool}`;
  const values = drift.before !== undefined || drift.after !== undefined ? `: ${showValue(drift.before ?? null)} → ${showValue(drift.after ?? null)}` : '';
  return { severity: 'warning', message: `runner.lock: ${name}: ${drift.change}${values}`, hint: '`runner lock --update` records it' };
}
