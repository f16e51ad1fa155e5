// Where the runner under test lives: dist/ (the build output), or the folder
// in RUNNER_DIST, to compare a patched build against the current one.
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './paths.mjs';

/** The runner build being measured. */
export const distDir = process.env.RUNNER_DIST ? resolve(process.env.RUNNER_DIST) : join(repoRoot, 'dist');

/** Imports a module of the build under test, e.g. `scheduler/executor.js`. */
export function importDist(relative) {
  return import(pathToFileURL(isAbsolute(relative) ? relative : join(distDir, relative)).href);
}
