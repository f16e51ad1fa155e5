import { isAbsolute, join, relative } from 'node:path';
import { CallAbortReason } from '../apps/call-error.js';
import type { AppRegistry } from '../apps/registry.js';
import { createRunId } from '../artifacts/run-id.js';
import type { RunRecord } from '../artifacts/run-record.js';
import type { Clock } from '../clock.js';
import type { Composition } from '../composition.js';
import type { RunnerConfig } from '../config/types.js';
import { createToolCheck, findLockDrift, formatDrift, lockFilePath, type LockCheck, type ToolCheck } from '../lock/index.js';
import { summaryLine } from '../report/progress.js';
import { maskSecrets } from '../secrets.js';
import { formatMs } from '../config/durations.js';
import type { PolicyOverrides } from '../scheduler/events.js';
import { executeRun } from '../scheduler/executor.js';
import { Limits } from '../scheduler/limits.js';
import type { Slots } from '../scheduler/slots.js';
import type { ResumeOptions } from '../scheduler/resume.js';
import { deleteRuns, selectRunsToPrune } from '../store/prune.js';
import { currentOwner } from '../store/run-owner.js';
import type { RunOwner, RunStore } from '../store/run-store.js';
import { resolveInputs } from '../workflow/inputs.js';
import type { Workflow } from '../workflow/types.js';
import { CronTrigger } from './cron-trigger.js';
import type { ServiceEvent, TriggerRecord } from './events.js';
import { FileTrigger } from './file-trigger.js';
import type { FiringHandoff } from './handoff.js';
import { recoverLostTriggers, resumeInterruptedRuns, watchWaitingRuns, type RecoveryHost } from './recover.js';
import { checkApprovals } from './approval-watch.js';
import { watchFileWrites } from './file-writes.js';
import { takeOverRun } from '../store/take-over.js';
import { messageOf, RunnerError } from '../errors.js';
import { iso, type TriggerHost } from './host.js';
import { locksFolder, pruneOccurrenceLocks } from './occurrence-lock.js';
import { ScheduleCursorStore } from './schedule-cursor.js';
import { SeenStore } from './seen-store.js';
import { takeFirings } from './take-firings.js';

export interface TriggerServiceOptions {
  /** The config and the parts every run shares (apps, limits, run store, clock); closed when the service stops. */
  context: Composition;
  /** Loaded and validated; see loadTriggeredWorkflows. */
  workflows: Workflow[];
  /** Which kinds of trigger to start (`runner watch`: watch only, `cron`: schedule only, `serve`: both). */
  triggers: { watch: boolean; schedule: boolean };
  /** Files present at start trigger too. */
  initial: boolean;
  policy: PolicyOverrides;
  env: Record<string, string | undefined>;
  onEvent: (event: ServiceEvent) => void;
  /** Stability check tuning (see FileSettler). */
  watchTuning?: { pollMs?: number; stableChecks?: number };
  /** How late an occurrence may fire and still count as on time. @default 5000 */
  lateToleranceMs?: number;
  /** How often a waiting run's approvals are looked up in the run store (SQLite cannot notify). @default 1000 */
  approvalPollMs?: number;
}

interface InFlightRun {
  controller: AbortController;
  done: Promise<void>;
}

/** How often old occurrence locks are swept. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * A long-running runner: watches files and fires schedules for a set of
 * workflows, and runs them on one AppRegistry (one process per app, shared by
 * every run, restarted when it dies) and one set of Limits. Each workflow's
 * `concurrency` is shared by all of its runs in flight. `stop` stops the
 * triggers, gives runs in flight a grace period, then cancels them.
 */
export class TriggerService implements TriggerHost {
  readonly clock: Clock;
  private readonly apps: AppRegistry;
  private readonly config: RunnerConfig;
  private limits!: Limits;
  private readonly workflowQueues = new Map<string, Slots | null>();
  private readonly runs = new Map<string, InFlightRun>();
  /** Runs that ended waiting for an approval, each until it goes on and ends for good: what `overlap` waits for. */
  private readonly waiting = new Map<string, Promise<void>>();
  /** Trigger work between "fired" and "run launched" (hashing, claiming, locking). */
  private readonly tracked = new Set<Promise<void>>();
  private readonly files: FileTrigger[] = [];
  private readonly crons: CronTrigger[] = [];
  private readonly loops: Promise<void>[] = [];
  private readonly triggers = new AbortController();
  private readonly graceCut = new AbortController();
  private stopping: Promise<{ cancelled: number }> | undefined;
  private store: RunStore | undefined;
  private readonly owner: RunOwner;
  private readonly seen: SeenStore;
  /** Queue mode: where firings go so that one process of the cluster acts on each. */
  private handoff: FiringHandoff | undefined;
  /** The lock problem last reported per workflow: reported again only when it changes. */
  private readonly lockReports = new Map<string, string>();

  constructor(private readonly options: TriggerServiceOptions) {
    const { context } = options;
    this.clock = context.clock;
    this.config = context.config;
    this.apps = context.apps(join(this.config.artifacts, '.runner', 'logs'));
    this.owner = currentOwner(this.clock.now());
    this.seen = new SeenStore(this.config.artifacts);
  }

  /** Starts every trigger; resolves once watches are ready and schedules armed. */
  async start(): Promise<void> {
    const { workflows, triggers, context } = this.options;
    const config = this.config;
    const seen = this.seen;
    this.store = await context.store();
    this.limits = await context.limits();
    const recovery = this.recoveryHost(this.store);
    // Runs a runner left unfinished when it died go on first, before any trigger can start their file again.
    await resumeInterruptedRuns(recovery, workflows);
    // Triggered runs left waiting for an approval (by this service before a restart) are watched again.
    await watchWaitingRuns(recovery, workflows);
    const cursors = new ScheduleCursorStore(config.artifacts);
    const locks = locksFolder(config.artifacts);
    const handoff = config.queue ? await this.openHandoff(config.queue) : undefined;
    const ready: Extract<ServiceEvent, { type: 'ready' }>['workflows'] = [];
    for (const workflow of workflows) {
      const entry: (typeof ready)[number] = { name: workflow.name };
      let file: FileTrigger | undefined;
      const crons: CronTrigger[] = [];
      if (triggers.watch && workflow.on.watch) {
        for (const glob of workflow.on.watch.paths.filter((path) => isAbsolute(path) && relative(config.dir, path).startsWith('..'))) {
          this.emit({ type: 'warning', workflow: workflow.name, message: `watching ${glob}, outside the project (written as an absolute path)` });
        }
        file = await FileTrigger.start(workflow, this, { config, initial: this.options.initial, seen, handoff, ...this.options.watchTuning });
        this.files.push(file);
        await recoverLostTriggers(recovery, workflow, file);
        entry.watch = workflow.on.watch.paths;
      }
      if (triggers.schedule) {
        for (const [index, spec] of workflow.on.schedule.entries()) {
          const cron = new CronTrigger(workflow, spec, index, this, { cursors, locksFolder: locks, lateToleranceMs: this.options.lateToleranceMs, handoff });
          this.crons.push(cron);
          crons.push(cron);
          const { next, loop } = await cron.start(this.triggers.signal);
          this.loops.push(loop);
          (entry.schedules ??= []).push({ cron: spec.cron, ...(spec.timezone !== undefined && { timezone: spec.timezone }), next: next === undefined ? null : iso(next) });
        }
      }
      if (entry.watch || entry.schedules) ready.push(entry);
      // Taken as soon as the workflow's triggers are in place: an occurrence job waiting past the late tolerance counts as missed.
      if (handoff && !this.stopping) await takeFirings(handoff, this, workflow, file, crons);
      if (this.stopping) return this.closeFiles(); // stopped while starting
    }
    if (this.crons.length > 0 && !handoff) this.loops.push(this.pruneLocksForever(locks));
    // Connect the apps now, so the first trigger does not wait for them; failures are left to the runs.
    void this.apps.warm(workflows.flatMap((workflow) => workflow.steps.map((step) => step.app)), this.triggers.signal);
    this.emit({ type: 'ready', workflows: ready });
  }

  /**
   * Stops triggering, waits up to `graceMs` for runs in flight, cancels the
   * rest, closes the apps. Resolves with how many runs had to be cancelled.
   */
  stop(reason: string, graceMs: number): Promise<{ cancelled: number }> {
    this.stopping ??= this.shutdown(reason, graceMs);
    return this.stopping;
  }

  /** Ends the grace period now (a second Ctrl-C): runs still in flight are cancelled. */
  cancelNow(): void {
    this.graceCut.abort();
  }

  isStopping(): boolean {
    return this.stopping !== undefined;
  }

  private async shutdown(reason: string, graceMs: number): Promise<{ cancelled: number }> {
    const graceOver = this.clock.sleep(graceMs, this.graceCut.signal).catch(() => undefined);
    // Queue mode: take no more firings; one being taken now is handed back to the other processes.
    const stoppedTaking = this.handoff?.stopTaking();
    this.triggers.abort();
    await this.closeFiles();
    const dropped = this.crons.reduce((count, cron) => count + cron.drain(), 0);
    await Promise.allSettled([...this.tracked, ...this.loops, stoppedTaking]);
    this.emit({ type: 'stopping', reason, inFlight: this.runs.size, graceMs, dropped });
    let cancelled = 0;
    if (this.runs.size > 0) await Promise.race([this.whenIdle(), graceOver]);
    if (this.runs.size > 0) {
      const ids = [...this.runs.keys()];
      this.emit({ type: 'cancelling', runs: ids });
      const why = new CallAbortReason('cancelled', `the runner stopped (${reason}) and the grace period of ${formatMs(graceMs)} ran out`);
      for (const run of this.runs.values()) run.controller.abort(why);
      cancelled = ids.length;
      await this.whenIdle();
    }
    this.graceCut.abort(); // clears the grace timer
    await this.apps.closeAll();
    await this.handoff?.close();
    await this.options.context.close(); // the run store (the apps are closed already)
    this.emit({ type: 'stopped', cancelled });
    return { cancelled };
  }

  private async openHandoff(url: string): Promise<FiringHandoff> {
    const { TriggerQueues } = await import('../queue/trigger-queues.js');
    const onError = (error: Error) => this.emit({ type: 'warning', message: `trigger queue: ${error.message}` });
    this.handoff = new TriggerQueues({ url, clock: this.clock, onError });
    return this.handoff;
  }

  private async closeFiles(): Promise<void> {
    await Promise.allSettled(this.files.splice(0).map((file) => file.close()));
  }

  private async whenIdle(): Promise<void> {
    while (this.runs.size > 0) await Promise.allSettled([...this.runs.values()].map((run) => run.done));
  }

  private async pruneLocksForever(folder: string): Promise<void> {
    while (!this.triggers.signal.aborted) {
      await pruneOccurrenceLocks(folder, this.clock.now()).catch(() => 0);
      await this.clock.sleep(PRUNE_EVERY_MS, this.triggers.signal).catch(() => undefined);
    }
  }

  launch(
    workflow: Workflow,
    trigger: TriggerRecord,
    finish?: (record: RunRecord | undefined) => Promise<string | undefined>,
    resume?: ResumeOptions,
  ): Promise<void> | undefined {
    if (this.stopping) return undefined;
    let runId = resume?.record.id ?? createRunId(this.clock.now());
    while (!resume && this.runs.has(runId)) runId = createRunId(this.clock.now()); // two runs in the same millisecond
    const controller = new AbortController();
    if (!resume) this.emit({ type: 'trigger', workflow: workflow.name, trigger, action: 'run', runId });
    const done = this.execute(workflow, trigger, runId, controller.signal, finish, resume).finally(() => this.runs.delete(runId));
    this.runs.set(runId, { controller, done });
    // A run that ends waiting is not over yet: what launch returns (what `overlap` holds on to) settles once it is.
    return done.then(() => this.waiting.get(runId));
  }

  private async execute(
    workflow: Workflow,
    trigger: TriggerRecord,
    runId: string,
    signal: AbortSignal,
    finish?: (record: RunRecord | undefined) => Promise<string | undefined>,
    resume?: ResumeOptions,
  ): Promise<void> {
    let record: RunRecord | undefined;
    try {
      // A run the lock stops never starts: no record, and the trigger's bookkeeping goes on as for a run that could not run.
      const lock = await this.checkLock(workflow, signal);
      if (lock.stops) {
        // A run being continued (answered approval, restart) stays as it was, no longer held here: `runner resume` takes it once the lock fits.
        if (resume) this.store?.releaseRun(runId, this.owner);
        const reason = `its tools differ from ${lockFilePath(this.config)}`;
        this.emit({ type: 'run-refused', workflow: workflow.name, runId, reason: resume ? `${reason}; after \`runner lock --update\`, \`runner resume ${runId}\` continues it` : reason });
      } else record = await executeRun({
        checkTool: lock.checkTool,
        store: this.store,
        owner: this.owner,
        resume,
        workflow,
        config: this.config,
        apps: this.apps,
        limits: this.limits,
        workflowQueue: this.queueOf(workflow),
        inputs: resolveInputs(workflow, {}, {}),
        trigger,
        policy: this.options.policy,
        clock: this.clock,
        signal,
        env: this.options.env,
        runId,
        onEvent: (event) => {
          if (event.type === 'run-started') this.emit({ type: 'run-started', workflow: workflow.name, runId, dir: event.run.dir, trigger });
        },
      });
    } catch (error) {
      this.emit({ type: 'warning', workflow: workflow.name, message: `run ${runId} could not run: ${messageOf(error)}` });
    }
    // A waiting run is not over: the trigger's bookkeeping (`finish`) waits until it ends, after its approvals are answered.
    const waiting = record?.status === 'waiting';
    const movedTo = waiting ? undefined : await this.finishTrigger(workflow, runId, record, finish);
    if (!record) return;
    if (waiting) this.waiting.set(runId, this.watchApproval(workflow, trigger, runId, finish));
    this.applyRetention(workflow);
    this.emit({
      type: 'run-finished',
      workflow: workflow.name,
      runId,
      dir: record.dir,
      status: record.status,
      durationMs: Date.parse(record.endedAt ?? record.startedAt) - Date.parse(record.startedAt),
      summary: summaryLine(record, (text) => maskSecrets(text, this.config.secretValues)),
      ...(movedTo !== undefined && { movedTo }),
    });
  }

  /**
   * Checks the workflow's tools against runner.lock before a run (the lock is
   * read each time, so `runner lock --update` takes effect at the next
   * firing). Drift is reported once, when it appears or changes, not at every
   * firing it stops.
   */
  private async checkLock(workflow: Workflow, signal: AbortSignal): Promise<{ stops: boolean; checkTool?: ToolCheck }> {
    let check: LockCheck | undefined;
    try {
      check = await findLockDrift({ config: this.config, workflows: [workflow], apps: this.apps, signal });
    } catch (error) {
      this.reportLockOnce(workflow.name, messageOf(error), () => this.emit({ type: 'warning', workflow: workflow.name, message: `${messageOf(error)}; its runs are stopped until it is fixed` }));
      return { stops: true };
    }
    const drifts = check?.drifts ?? [];
    const stops = drifts.some((drift) => drift.stops);
    const diff = drifts.length > 0 ? formatDrift(drifts) : '';
    this.reportLockOnce(workflow.name, diff, () => this.emit({ type: 'lock-drift', workflow: workflow.name, file: check!.file, stops, drifts, diff }));
    return { stops, checkTool: check && createToolCheck(check.lock) };
  }

  private reportLockOnce(workflow: string, report: string, emit: () => void): void {
    if (report === (this.lockReports.get(workflow) ?? '')) return;
    if (report) this.lockReports.set(workflow, report);
    else this.lockReports.delete(workflow);
    if (report) emit();
  }

  private async finishTrigger(
    workflow: Workflow,
    runId: string,
    record: RunRecord | undefined,
    finish?: (record: RunRecord | undefined) => Promise<string | undefined>,
  ): Promise<string | undefined> {
    try {
      return await finish?.(record);
    } catch (error) {
      this.emit({ type: 'warning', workflow: workflow.name, message: `after run ${runId}: ${messageOf(error)}` });
      return undefined;
    }
  }

  /**
   * Looks a waiting run up in the store every `approvalPollMs` until one of
   * its approvals is answered (`runner approve`/`deny`, the UI, any process)
   * or expires (recorded here), then continues it in this process. An answer
   * given on this machine rewrites the run's run.json: that write wakes the
   * look at once instead of at the next poll. Stops watching when the run is
   * no longer waiting (`runner resume` took it) or the service stops (a
   * restart watches it again). Resolves when the run has ended for good (the
   * continued run too) or is no longer watched.
   */
  watchApproval(workflow: Workflow, trigger: TriggerRecord, runId: string, finish?: (record: RunRecord | undefined) => Promise<string | undefined>): Promise<void> {
    const store = this.store;
    if (!store) return Promise.resolve();
    const pollMs = this.options.approvalPollMs ?? 1000;
    let continued: Promise<void> | undefined;
    // Each sleep between looks ends early when run.json is written (then the next look does not sleep at all) or the service stops.
    let written = false;
    let wake = new AbortController();
    const onStop = () => wake.abort();
    this.triggers.signal.addEventListener('abort', onStop, { once: true });
    const unwatch = watchRunFile(store, runId, () => {
      written = true;
      wake.abort();
    });
    const stopWaking = () => {
      this.triggers.signal.removeEventListener('abort', onStop);
      unwatch();
    };
    // Only the watching is tracked: a stop must not wait for the continued run beyond its grace period.
    const watching = (async () => {
      while (!this.triggers.signal.aborted) {
        if (!written) {
          wake = new AbortController();
          await this.clock.sleep(pollMs, wake.signal).catch(() => undefined);
        }
        written = false;
        if (this.triggers.signal.aborted) return;
        const check = checkApprovals(store, runId, this.clock.now());
        if (check.state === 'gone') return;
        if (check.state === 'waiting') continue;
        let record: RunRecord;
        try {
          record = takeOverRun(store, check.stored, { owner: this.owner, nowMs: this.clock.now(), secrets: this.config.secretEntries });
        } catch (error) {
          if (error instanceof RunnerError && error.code === 'busy') return; // another process continues it
          throw error;
        }
        this.emit({ type: 'answered', workflow: workflow.name, runId, steps: check.steps });
        continued = this.launch(workflow, trigger, finish, { record, rerunUnknown: false });
        if (!continued) store.releaseRun(runId, this.owner);
        return;
      }
    })().finally(stopWaking);
    this.track(watching);
    // Out of `waiting` once watching ends, before the continued run can end (waiting again puts it back): no cycle.
    const ended: Promise<void> = watching
      .catch(() => undefined)
      .then(() => {
        if (this.waiting.get(runId) === ended) this.waiting.delete(runId);
        return continued;
      });
    return ended;
  }

  /** `retention:` of the config, applied to a workflow's history after each of its runs. */
  private applyRetention(workflow: Workflow): void {
    const { retention } = this.config;
    if (!this.store || (retention.maxAgeMs === undefined && retention.maxRuns === undefined)) return;
    const store = this.store;
    this.track(
      (async () => {
        const chosen = selectRunsToPrune(store, { ...retention, workflow: workflow.name }, this.clock.now());
        if (chosen.length === 0) return;
        const { failed } = await deleteRuns(store, chosen);
        for (const { run, error } of failed) this.emit({ type: 'warning', workflow: workflow.name, message: `retention: could not delete run ${run.id}: ${error}` });
      })(),
    );
  }

  private recoveryHost(store: RunStore): RecoveryHost {
    return {
      store,
      config: this.config,
      seen: this.seen,
      owner: this.owner,
      nowMs: () => this.clock.now(),
      emit: (event) => this.emit(event),
      resume: (workflow, trigger, resume, finish) => void this.launch(workflow, trigger, finish, resume),
      watchApproval: (workflow, trigger, runId, finish) => void this.watchApproval(workflow, trigger, runId, finish),
    };
  }

  private queueOf(workflow: Workflow): Slots | null {
    let queue = this.workflowQueues.get(workflow.name);
    if (queue === undefined) {
      queue = Limits.forWorkflow(workflow.concurrency);
      this.workflowQueues.set(workflow.name, queue);
    }
    return queue;
  }

  track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.emit({ type: 'warning', message: messageOf(error) }));
    this.tracked.add(tracked);
    void tracked.finally(() => this.tracked.delete(tracked));
  }

  emit(event: ServiceEvent): void {
    try {
      this.options.onEvent(event);
    } catch {
      // A reporter that throws must not stop the runner.
    }
  }
}

/** Watches the run.json of a run for writes (an answer to its approval rewrites it); a run the store cannot name a folder for is not watched. */
function watchRunFile(store: RunStore, runId: string, onWrite: () => void): () => void {
  let dir: string | undefined;
  try {
    dir = store.getRun(runId)?.run.dir;
  } catch {
    // The looks on the poll will report what is wrong with the store.
  }
  return dir ? watchFileWrites(join(dir, 'run.json'), onWrite) : () => {};
}
