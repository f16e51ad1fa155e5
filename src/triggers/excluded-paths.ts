import { basename, dirname, relative, sep } from 'node:path';
import { RUN_ID_PATTERN } from '../artifacts/run-id.js';

/** The folders `claim: move` keeps beside the watched files. */
export const CLAIM_FOLDERS = ['processing', 'done', 'failed'] as const;
export type ClaimFolder = (typeof CLAIM_FOLDERS)[number];

/** The runner's own state under the artifacts folder (locks, content markers, logs). */
export const STATE_FOLDER = '.runner';

/**
 * Whether `path` is one the runner writes itself, so it can never trigger a
 * run, whatever the globs say: anything in a run folder
 * (`<artifacts>/<workflow>/<run-id>/...`, of any workflow) and anything in
 * `<artifacts>/.runner/`. Without this, `artifacts/**` would trigger on its own
 * run.json and loop forever.
 */
export function isRunnerOwnedPath(path: string, artifacts: string): boolean {
  const rel = relative(artifacts, path);
  if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) return false;
  const segments = rel.split(sep);
  if (segments[0] === STATE_FOLDER) return true;
  return segments.length >= 2 && RUN_ID_PATTERN.test(segments[1]);
}

/**
 * Whether `path` lies in a claim folder (processing/, done/, failed/) below
 * `base`: with `claim: move`, those hold files the runner moved there.
 */
export function isInClaimFolder(path: string, base: string): boolean {
  const rel = relative(base, path);
  if (rel.startsWith('..')) return false;
  const folders = dirname(rel).split(sep);
  return folders.some((folder) => (CLAIM_FOLDERS as readonly string[]).includes(folder));
}

/** Temp files of atomic writers (`.name.tmp`, `name.123.tmp`, `~$name`, `name~`): never a finished file. */
export function isTempFileName(path: string): boolean {
  const name = basename(path);
  return name.endsWith('.tmp') || name.endsWith('~') || name.startsWith('~$') || name.endsWith('.swp') || name.endsWith('.crdownload') || name.endsWith('.part');
}
