import { mkdir, readdir, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Dirent, Stats } from 'node:fs';
import type { Clock } from '../clock.js';
import type { WatchTrigger } from '../workflow/types.js';
import { isInClaimFolder, isRunnerOwnedPath, isTempFileName } from './excluded-paths.js';
import { FileSettler, type FileFacts, type SettledFile } from './file-settle.js';
import { compileGlob, type CompiledGlob } from './glob.js';
import { messageOf } from '../errors.js';

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
 * chokidar cannot watch a folder that does not exist yet: a missing base
 * folder inside the project is created, one outside it never is (its nearest
 * existing parent is watched instead, so files count once it appears); either
 * is reported through `onError`. Resolves once the initial scan is done.
 */
export async function watchFiles(options: WatchFilesOptions): Promise<FileWatch> {
  const { trigger, artifacts } = options;
  const globs = trigger.paths.map((glob) => compileGlob(glob, options.configDir));
  const bases = [...new Set(globs.map((glob) => glob.base))];
  const roots = await Promise.all(bases.map((base) => prepareBase(base, options)));
  const claims = trigger.claim === 'move';
  const matchOf = (path: string): CompiledGlob | undefined => {
    if (isRunnerOwnedPath(path, artifacts) || isTempFileName(path)) return undefined;
    const glob = globs.find((candidate) => candidate.matches(path));
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
  // A glob watched from a parent of its base needs the levels in between too.
  const depths = globs.map((glob) => {
    const root = roots[bases.indexOf(glob.base)];
    return glob.depth === undefined ? undefined : glob.depth + levelsBetween(root, glob.base);
  });
  const watcher: FSWatcher = watch([...new Set(roots)], {
    ignoreInitial: !options.initial,
    followSymlinks: false,
    persistent: true,
    ...(depths.every((depth) => depth !== undefined) && { depth: Math.max(...depths) }),
    ignored: (path: string, stats?: Stats) => isIgnored(path, stats),
  });
  for (const event of ['add', 'change', 'unlink'] as const) {
    watcher.on(event, (path) => {
      if (matchOf(path)) settler.push(path, event);
    });
  }
  watcher.on('error', (error) => options.onError(`watching ${trigger.paths.join(', ')}: ${messageOf(error)}`));
  await new Promise<void>((resolve) => watcher.once('ready', resolve));
  const catchUp = new FolderCatchUp({
    clock: options.clock,
    known: () => watcher.getWatched(),
    isIgnoredFolder: (path) => isIgnored(path, FOLDER),
    onFile: (path) => {
      if (matchOf(path)) settler.push(path, 'add');
    },
    onMissedFolder: (path) => void watcher.add(path),
  });
  watcher.on('addDir', (path) => catchUp.folderAppeared(path));
  return {
    globs,
    retrigger(path) {
      if (matchOf(path)) settler.push(path, 'add');
    },
    async close() {
      catchUp.close();
      settler.close();
      await watcher.close();
    },
  };
}

/** What `isIgnored` needs to know of a folder it is asked about. */
const FOLDER = { isDirectory: () => true } as Stats;

/** When a folder that appeared is listed again (ms after chokidar reported it): twice, in case its first listing was slow. */
const CATCH_UP_AFTER_MS = [250, 2_000];

/**
 * chokidar lists a folder that appears and only then starts watching it, so a
 * file written into it in between is never reported (chokidar issue 1471, open
 * in 5.0): `mkdir -p inbox/new && cp report.pdf inbox/new/` could go unseen.
 * Each folder that appears after the watch started is listed again a moment
 * later, and every file in it that chokidar does not know is reported as added
 * (a file reported twice settles once, and its content runs once). A folder
 * inside it that chokidar missed the same way is handed to chokidar to watch
 * and walked whole. One `known()` call per round, however many folders appeared.
 */
export class FolderCatchUp {
  private pending: { folder: string; at: number }[] = [];
  private stopTimer: (() => void) | undefined;
  private timerAt = Infinity;
  private closed = false;

  constructor(
    private readonly options: {
      clock: Clock;
      /** chokidar's view: folder → the names it knows in it. */
      known: () => Record<string, string[]>;
      isIgnoredFolder: (path: string) => boolean;
      onFile: (path: string) => void;
      onMissedFolder: (path: string) => void;
    },
  ) {}

  folderAppeared(folder: string): void {
    if (this.closed) return;
    const now = this.options.clock.now();
    for (const delay of CATCH_UP_AFTER_MS) this.pending.push({ folder, at: now + delay });
    this.arm(now + CATCH_UP_AFTER_MS[0]);
  }

  close(): void {
    this.closed = true;
    this.stopTimer?.();
    this.pending = [];
  }

  /** Sets the timer for `at` unless it is already set for then or sooner. */
  private arm(at: number): void {
    if (at >= this.timerAt) return;
    this.stopTimer?.();
    this.timerAt = at;
    this.stopTimer = this.options.clock.after(Math.max(0, at - this.options.clock.now()), () => void this.round());
  }

  private async round(): Promise<void> {
    this.stopTimer = undefined;
    this.timerAt = Infinity;
    const now = this.options.clock.now();
    const folders = new Set<string>();
    const later: { folder: string; at: number }[] = [];
    let next = Infinity;
    for (const entry of this.pending) {
      if (entry.at <= now) folders.add(entry.folder);
      else {
        later.push(entry);
        next = Math.min(next, entry.at);
      }
    }
    this.pending = later;
    if (next !== Infinity) this.arm(next);
    if (folders.size === 0) return;
    const known = this.options.known();
    for (const folder of folders) await this.list(folder, known, false);
  }

  /** Reports the files in `folder` chokidar does not know (all of them with `all`), and walks folders it missed. */
  private async list(folder: string, known: Record<string, string[]>, all: boolean): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      return; // gone again
    }
    if (this.closed) return;
    const names = new Set(all ? [] : (known[folder] ?? []));
    for (const entry of entries) {
      if (names.has(entry.name)) continue;
      const path = join(folder, entry.name);
      if (!entry.isDirectory()) this.options.onFile(path);
      else if (!this.options.isIgnoredFolder(path)) {
        this.options.onMissedFolder(path);
        await this.list(path, known, true);
      }
    }
  }
}

/**
 * The folder to watch for `base`: `base` itself when it exists or could be
 * created inside the config folder; else its nearest existing parent.
 */
async function prepareBase(base: string, options: WatchFilesOptions): Promise<string> {
  if (await isFolder(base)) return base;
  const inside = relative(options.configDir, base);
  const shown = `${base} (watch paths: ${options.trigger.paths.join(', ')})`;
  if (!inside.startsWith('..') && !isAbsolute(inside)) {
    await mkdir(base, { recursive: true });
    options.onError(`watch folder ${inside || '.'} did not exist, so it was created`);
    return base;
  }
  let parent = dirname(base);
  while (!(await isFolder(parent)) && dirname(parent) !== parent) parent = dirname(parent);
  options.onError(`watch folder ${shown} does not exist; it is outside the project, so it is not created: files there trigger once it exists`);
  return parent;
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** How many folder levels `inner` is below `outer` (0 when they are the same). */
function levelsBetween(outer: string, inner: string): number {
  const rel = relative(outer, inner);
  return rel === '' ? 0 : rel.split(sep).length;
}

/** Whether files matching `glob` can lie inside folder `dir`. */
function couldHold(glob: CompiledGlob, dir: string): boolean {
  const rel = relative(glob.base, dir);
  if (rel === '') return true;
  if (rel.startsWith('..')) return relative(dir, glob.base).startsWith('..') === false; // an ancestor of the base
  return glob.depth === undefined || rel.split(sep).length <= glob.depth;
}
