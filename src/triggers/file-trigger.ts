import { lstat, realpath, rename } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import type { RunnerConfig } from '../config/types.js';
import type { Workflow } from '../workflow/types.js';
import { claimFile, claimRootFor, releaseClaim } from './claim.js';
import type { WatchTriggerRecord } from './events.js';
import type { SettledFile } from './file-settle.js';
import type { CompiledGlob } from './glob.js';
import { fileJobId, watchQueueName, type FileJob, type FiringHandoff } from './handoff.js';
import { messageOf } from '../errors.js';
import { iso, type TriggerHost } from './host.js';
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
  /** Queue mode: each settled file goes through BullMQ, one job per (path, content, ctime), taken by one process. */
  handoff?: FiringHandoff;
}

/**
 * One workflow's `on.watch`: from a settled file to a run. A file runs when
 * its event is wanted, it is not a symlink out of the watched folder, and its
 * content has not run (content marker); with `claim: move` it is moved into
 * `processing/` first and into `done/` or `failed/` after. In queue mode the
 * content marker and the claim are taken by whichever process takes its job.
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
      // The run reports its own failures as events; its promise only says when it has ended.
      if (!this.movedAway.delete(file.path)) void host.launch(workflow, base);
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
    const job: FileJob = { event: file.event, path: file.path, base: file.glob.base, stableAtMs: file.stableAtMs, hash };
    const { handoff } = this.options;
    if (!handoff) return this.run(job);
    // Every process watching the same shared folder offers the file; BullMQ keeps one job and one process takes it (takeQueued).
    await handoff.offer(watchQueueName(workflow.name), fileJobId(file.path, hash, link.ctimeMs), job).catch((error: unknown) => skip(`it could not be queued: ${messageOf(error)}`));
  }

  /** A file's job this process took (queue mode): run unless the file went away while it waited. */
  async takeQueued(job: FileJob): Promise<void> {
    const present = await lstat(job.path).then(
      () => true,
      () => false,
    );
    if (present) return this.run(job);
    const trigger: WatchTriggerRecord = { type: 'watch', event: job.event, path: job.path, source: job.path, time: iso(job.stableAtMs) };
    this.host.emit({ type: 'trigger', workflow: this.workflow.name, trigger, action: 'skipped', reason: 'it was gone before a runner process took it' });
  }

  /** Takes the content marker, claims the file with `claim: move`, and starts the run. */
  private async run(job: FileJob): Promise<void> {
    const { workflow, host } = this;
    const watch = workflow.on.watch!;
    const base: WatchTriggerRecord = { type: 'watch', event: job.event, path: job.path, source: job.path, time: iso(job.stableAtMs) };
    const skip = (reason: string) => host.emit({ type: 'trigger', workflow: workflow.name, trigger: base, action: 'skipped', reason });
    const { hash } = job;
    const { seen } = this.options;
    const taken = await seen.take(workflow.name, hash, job.path, host.clock.now());
    if (!taken.taken) {
      const mark = taken.mark;
      return skip(
        mark?.status === 'succeeded'
          ? `the same content already ran${mark.runId ? ` (run ${mark.runId}, ${mark.path})` : ''}`
          : `the same content is being run${mark ? ` (${mark.path})` : ''}`,
      );
    }
    let path = job.path;
    if (watch.claim === 'move' && !host.isStopping()) {
      const claimed = await claimFile(job.path, claimRootFor(job.base, this.options.config.dir)).catch((error: unknown) => {
        host.emit({ type: 'warning', workflow: workflow.name, message: `cannot claim ${job.path}: ${messageOf(error)}` });
        return undefined;
      });
      if (!claimed) {
        await seen.forget(workflow.name, hash);
        return skip('it was gone before it could be claimed (another runner took it?)');
      }
      this.rememberMovedAway(job.path);
      path = claimed;
    }
    const trigger: WatchTriggerRecord = { ...base, path, hash: `sha256:${hash}` };
    const started = host.launch(workflow, trigger, async (record) => {
      const succeeded = record?.status === 'succeeded';
      await seen.finish(workflow.name, hash, { runId: record?.id ?? '', path: job.path, succeeded }, host.clock.now());
      return path === job.path ? undefined : releaseClaim(path, succeeded ? 'done' : 'failed');
    });
    if (!started) {
      // Shutdown began between the claim and the launch: leave things as they were.
      await seen.forget(workflow.name, hash);
      if (path !== job.path) await rename(path, job.path).catch(() => undefined);
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
