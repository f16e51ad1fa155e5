import { lstat, realpath, rename } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import type { RunnerConfig } from '../config/types.js';
import type { Workflow } from '../workflow/types.js';
import { claimFile, claimRootFor, releaseClaim } from './claim.js';
import type { WatchTriggerRecord } from './events.js';
import type { SettledFile } from './file-settle.js';
import type { CompiledGlob } from './glob.js';
import { iso, messageOf, type TriggerHost } from './host.js';
import { hashFile, type SeenStore } from './seen-store.js';
import { watchFiles, type FileWatch } from './watch.js';

/** How long a path the runner moved away is remembered, to drop its own `unlink` event. */
const MOVED_MEMORY_MS = 10_000;

export interface FileTriggerOptions {
  config: RunnerConfig;
  initial: boolean;
  seen: SeenStore;
  /** Stability check tuning (see FileSettler). */
  pollMs?: number;
  stableChecks?: number;
}

/**
 * One workflow's `on.watch`: from a settled file to a run. A file runs when
 * its event is wanted, it is not a symlink out of the watched folder, and its
 * content has not run (content marker); with `claim: move` it is moved into
 * `processing/` first and into `done/` or `failed/` after.
 */
export class FileTrigger {
  private watch: FileWatch | undefined;
  private readonly realBases = new Map<string, Promise<string>>();
  private readonly movedAway = new Map<string, number>();

  private constructor(
    private readonly workflow: Workflow,
    private readonly host: TriggerHost,
    private readonly options: FileTriggerOptions,
  ) {}

  /** Watches the workflow's globs; resolves once the initial scan is done. */
  static async start(workflow: Workflow, host: TriggerHost, options: FileTriggerOptions): Promise<FileTrigger> {
    const trigger = new FileTrigger(workflow, host, options);
    trigger.watch = await watchFiles({
      trigger: workflow.on.watch!,
      configDir: options.config.dir,
      artifacts: options.config.artifacts,
      initial: options.initial,
      clock: host.clock,
      pollMs: options.pollMs,
      stableChecks: options.stableChecks,
      onFile: (file) => host.track(trigger.onFile(file)),
      onError: (message) => host.emit({ type: 'warning', workflow: workflow.name, message }),
    });
    return trigger;
  }

  /** The folders its globs start from (the watched folders). */
  get bases(): string[] {
    return [...new Set(this.watch?.globs.map((glob) => glob.base) ?? [])];
  }

  /** Runs `path` as if it had just appeared, when it matches (see SeenStore: content already run is still skipped). */
  retrigger(path: string): void {
    this.watch?.retrigger(path);
  }

  /** Stops watching; files still settling are dropped. */
  async close(): Promise<void> {
    await this.watch?.close();
  }

  private async onFile(file: SettledFile & { glob: CompiledGlob }): Promise<void> {
    const { workflow, host } = this;
    const watch = workflow.on.watch!;
    if (!watch.events.includes(file.event) || host.isStopping()) return;
    const base: WatchTriggerRecord = { type: 'watch', event: file.event, path: file.path, source: file.path, time: iso(file.stableAtMs) };
    const skip = (reason: string) => host.emit({ type: 'trigger', workflow: workflow.name, trigger: base, action: 'skipped', reason });
    if (file.event === 'unlink') {
      if (!this.movedAway.delete(file.path)) host.launch(workflow, base);
      return;
    }
    const link = await lstat(file.path).catch(() => undefined);
    if (!link) return; // gone already
    if (link.isSymbolicLink()) {
      const target = await realpath(file.path).catch(() => undefined);
      if (!target) return skip('it is a broken symlink');
      if (!isInside(await this.realBase(file.glob.base), target)) {
        return skip(`it is a symlink to ${target}, outside the watched folder; symlinks out of it are not followed`);
      }
    }
    let hash: string;
    try {
      hash = await hashFile(file.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      return skip(`it cannot be read: ${messageOf(error)}`);
    }
    const { seen } = this.options;
    const taken = await seen.take(workflow.name, hash, file.path, host.clock.now());
    if (!taken.taken) {
      const mark = taken.mark;
      return skip(
        mark?.status === 'succeeded'
          ? `the same content already ran${mark.runId ? ` (run ${mark.runId}, ${mark.path})` : ''}`
          : `the same content is being run${mark ? ` (${mark.path})` : ''}`,
      );
    }
    let path = file.path;
    if (watch.claim === 'move' && !host.isStopping()) {
      const claimed = await claimFile(file.path, claimRootFor(file.glob.base, this.options.config.dir)).catch((error: unknown) => {
        host.emit({ type: 'warning', workflow: workflow.name, message: `cannot claim ${file.path}: ${messageOf(error)}` });
        return undefined;
      });
      if (!claimed) {
        await seen.forget(workflow.name, hash);
        return skip('it was gone before it could be claimed (another runner took it?)');
      }
      this.rememberMovedAway(file.path);
      path = claimed;
    }
    const trigger: WatchTriggerRecord = { ...base, path, hash: `sha256:${hash}` };
    const started = host.launch(workflow, trigger, async (record) => {
      const succeeded = record?.status === 'succeeded';
      await seen.finish(workflow.name, hash, { runId: record?.id ?? '', path: file.path, succeeded }, host.clock.now());
      return path === file.path ? undefined : releaseClaim(path, succeeded ? 'done' : 'failed');
    });
    if (!started) {
      // Shutdown began between the claim and the launch: leave things as they were.
      await seen.forget(workflow.name, hash);
      if (path !== file.path) await rename(path, file.path).catch(() => undefined);
    }
  }

  private realBase(base: string): Promise<string> {
    let real = this.realBases.get(base);
    if (!real) {
      real = realpath(base).catch(() => base);
      this.realBases.set(base, real);
    }
    return real;
  }

  private rememberMovedAway(path: string): void {
    const now = this.host.clock.now();
    for (const [known, at] of this.movedAway) if (now - at > MOVED_MEMORY_MS) this.movedAway.delete(known);
    this.movedAway.set(path, now);
  }
}

function isInside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
