import { mkdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Stats } from 'node:fs';
import type { Clock } from '../clock.js';
import type { WatchTrigger } from '../workflow/types.js';
import { isInClaimFolder, isRunnerOwnedPath, isTempFileName } from './excluded-paths.js';
import { FileSettler, type FileFacts, type SettledFile } from './file-settle.js';
import { compileGlob, type CompiledGlob } from './glob.js';

export interface WatchFilesOptions {
  trigger: WatchTrigger;
  /** Globs are relative to this folder (the config folder). */
  configDir: string;
  artifacts: string;
  /** Files present at start trigger too. */
  initial: boolean;
  clock: Clock;
  /** Tuning of the stability check (see FileSettler). */
  pollMs?: number;
  stableChecks?: number;
  stat?: (path: string) => Promise<FileFacts | undefined>;
  /** A matching file settled; `glob` is the first glob that matches it. */
  onFile: (file: SettledFile & { glob: CompiledGlob }) => void;
  onError: (message: string) => void;
}

/** A running watch of one workflow's globs. */
export interface FileWatch {
  globs: CompiledGlob[];
  /** Reports `path` as added, as if it had just appeared (a trigger found again after a crash). */
  retrigger(path: string): void;
  /** Stops watching; pending files never settle. */
  close(): Promise<void>;
}

/**
 * Watches the folders a workflow's globs start from (chokidar 5 has no glob
 * support) and reports each matching file once it has settled. Symlinks are
 * reported as links, never followed into; paths the runner writes itself
 * (run folders, `.runner/`, claim folders) and temp files never match.
 * Missing base folders are created, since chokidar cannot watch a folder that
 * does not exist yet. Resolves once the initial scan is done.
 */
export async function watchFiles(options: WatchFilesOptions): Promise<FileWatch> {
  const { trigger, artifacts } = options;
  const globs = trigger.paths.map((glob) => compileGlob(glob, options.configDir));
  const bases = [...new Set(globs.map((glob) => glob.base))];
  await Promise.all(bases.map((base) => mkdir(base, { recursive: true })));
  const claims = trigger.claim === 'move';
  const matchOf = (path: string): CompiledGlob | undefined => {
    if (isRunnerOwnedPath(path, artifacts) || isTempFileName(path)) return undefined;
    const glob = globs.find((candidate) => candidate.regex.test(path));
    if (!glob || (claims && isInClaimFolder(path, glob.base))) return undefined;
    return glob;
  };
  const settler = new FileSettler({
    clock: options.clock,
    debounceMs: trigger.debounceMs,
    pollMs: options.pollMs,
    stableChecks: options.stableChecks,
    stat: options.stat,
    onSettled: (file) => {
      const glob = matchOf(file.path);
      if (glob) options.onFile({ ...file, glob });
    },
  });
  // Prunes folders no glob can reach, so `artifacts/inbox/*.png` never walks the run folders.
  const isIgnored = (path: string, stats?: Stats): boolean => {
    if (isRunnerOwnedPath(path, artifacts)) return true;
    if (stats?.isDirectory()) {
      const reachable = globs.some((glob) => couldHold(glob, path));
      const claimFolder = claims && globs.every((glob) => isInClaimFolder(join(path, 'x'), glob.base));
      return !reachable || claimFolder;
    }
    if (stats) return matchOf(path) === undefined;
    return false;
  };
  const depths = globs.map((glob) => glob.depth);
  const watcher: FSWatcher = watch(bases, {
    ignoreInitial: !options.initial,
    followSymlinks: false,
    persistent: true,
    ...(depths.every((depth) => depth !== undefined) && { depth: Math.max(...(depths as number[])) }),
    ignored: (path: string, stats?: Stats) => isIgnored(path, stats),
  });
  for (const event of ['add', 'change', 'unlink'] as const) {
    watcher.on(event, (path) => {
      if (matchOf(path)) settler.push(path, event);
    });
  }
  watcher.on('error', (error) => options.onError(`watching ${trigger.paths.join(', ')}: ${error instanceof Error ? error.message : String(error)}`));
  await new Promise<void>((resolve) => watcher.once('ready', resolve));
  return {
    globs,
    retrigger(path) {
      if (matchOf(path)) settler.push(path, 'add');
    },
    async close() {
      settler.close();
      await watcher.close();
    },
  };
}

/** Whether files matching `glob` can lie inside folder `dir`. */
function couldHold(glob: CompiledGlob, dir: string): boolean {
  const rel = relative(glob.base, dir);
  if (rel === '') return true;
  if (rel.startsWith('..')) return relative(dir, glob.base).startsWith('..') === false; // an ancestor of the base
  return glob.depth === undefined || rel.split(sep).length <= glob.depth;
}
