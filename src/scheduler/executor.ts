import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { AppRegistry } from '../apps/registry.js';
import { CallAbortReason } from '../apps/call-error.js';
import { createRunId } from '../artifacts/run-id.js';
import { WriteBehind } from '../artifacts/write-behind.js';
import { makeRunFolder, RunRecordWriter, type RunRecord, type StepRecord, type StepStatus } from '../artifacts/run-record.js';
import { isoTime, systemClock, type Clock } from '../clock.js';
import type { RunnerConfig } from '../config/types.js';
import { messageOf, writeWarning } from '../errors.js';
import { maskRunRecord } from '../secrets.js';
import { openRunStore } from '../store/run-history.js';
import { currentOwner } from '../store/run-owner.js';
import { RunRecorder } from '../store/run-recorder.js';
import { appsCalledBy, BUILTIN_APP } from '../builtins/catalog.js';
import type { RunOwner, RunStore } from '../store/run-store.js';
import {
  evaluateCondition,
  evaluateTemplate,
  usesStatusFunction,
  type ExpressionContext,
  type StepView,
} from '../workflow/expressions.js';
import type { Step, Workflow } from '../workflow/types.js';
import { formatMs } from '../config/durations.js';
import { itemDir, runCall, type CallDispatcher, type CallEnvironment, type CallRecord } from './call-step.js';
import type { PolicyOverrides, RunEvent } from './events.js';
import { Limits } from './limits.js';
import { Slots } from './slots.js';
import { mergeRetry } from './retry.js';
import { activeMsBefore, keepsItem, pendingItem, pendingRecord, resumeSteps, type ResumeOptions } from './resume.js';

/** The most items a `foreach` may give when its step sets no `max-items`. */
export const DEFAULT_MAX_ITEMS = 10_000;

export interface ExecuteRunOptions {
  workflow: Workflow;
  config: RunnerConfig;
  apps: AppRegistry;
  /** Shared across runs in one process. */
  limits: Limits;
  /** The slots of the workflow's `concurrency`; a long-running runner shares them across a workflow's runs. Default: its own for this run. */
  workflowQueue?: Slots | null;
  /** Already resolved and validated. */
  inputs: Record<string, unknown>;
  trigger?: RunRecord['trigger'];
  policy: PolicyOverrides;
  clock?: Clock;
  /** Abort with a CallAbortReason('cancelled') to cancel the run. */
  signal?: AbortSignal;
  env?: Record<string, string | undefined>;
  runId?: string;
  /**
   * Continue this earlier run of the same workflow: its succeeded steps and
   * foreach items are kept, not run again. The caller has claimed it in the
   * store and put the journal's open intents into its record (see takeOverRun).
   */
  resume?: ResumeOptions;
  /** Where the run is recorded. Default: the SQLite store of the artifacts folder, opened and closed here. */
  store?: RunStore;
  /** Who executes the run. Default: this process. */
  owner?: RunOwner;
  onEvent?: (event: RunEvent) => void;
  /** Where app calls are executed (queue mode); default: in this process. */
  dispatch?: CallDispatcher;
  /** With a runner.lock: what changed in a tool since it was locked, checked before each call is sent. */
  checkTool?: CallEnvironment['checkTool'];
  /** Called once the run folder exists, before any step runs. */
  onRunDir?: (dir: string) => void;
  /** Told about a problem that fails nothing (report.html could not be written). Default: a `warning:` line on stderr. */
  onWarning?: (message: string) => void;
}

/**
 * Runs a workflow once: steps start as soon as their needs are done, up to
 * the limits; results go to the run folder and run.json. Resolves with the
 * final run record; step failures are in the record, never thrown.
 */
export async function executeRun(options: ExecuteRunOptions): Promise<RunRecord> {
  const { workflow, config, apps } = options;
  const clock = options.clock ?? systemClock;
  const previous = options.resume?.record;
  const id = previous?.id ?? options.runId ?? createRunId(clock.now());
  const dir = join(config.artifacts, workflow.name, id);
  makeRunFolder(dir);
  options.onRunDir?.(dir);

  const sessionStartMs = clock.now();
  const resumed = previous ? resumeSteps(previous, workflow, options.resume!) : undefined;
  const kept = resumed?.kept ?? new Set<string>();
  const record: RunRecord = {
    id,
    workflow: workflow.name,
    workflowFile: workflow.file,
    status: 'running',
    trigger: previous?.trigger ?? options.trigger ?? { type: 'manual' },
    inputs: previous?.inputs ?? options.inputs,
    startedAt: previous?.startedAt ?? iso(clock),
    endedAt: null,
    dir,
    apps: { ...previous?.apps },
    steps: resumed?.steps ?? workflow.steps.map(pendingRecord),
    ...(previous && {
      resumedAt: [...(previous.resumedAt ?? []), iso(clock)],
      resumes: [...(previous.resumes ?? []), { at: iso(clock), steps: resumed!.rerun }],
    }),
    error: null,
  };

  // The run's own signal: aborted by the caller (cancel), by the run timeout, or by a failed write.
  const controller = new AbortController();
  // Every queued and in-flight call listens on this signal; that is by design, not a leak.
  setMaxListeners(0, controller.signal);
  let storageFailure: string | undefined;
  const onStorageFailure = (error: unknown) => {
    if (storageFailure) return;
    storageFailure = messageOf(error);
    controller.abort(new CallAbortReason('storage', `the run could not be recorded, so it stopped: ${storageFailure}`));
  };

  const ownStore = options.store === undefined;
  const store = options.store ?? openRunStore(config, clock.now());
  const owner = options.owner ?? currentOwner(clock.now());
  const recorder = new RunRecorder(store, record, {
    owner,
    secrets: config.secretEntries,
    clock,
    session: previous?.resumes?.length ?? 0,
    onFailure: onStorageFailure,
  });
  try {
    if (previous) recorder.rewrite();
    else recorder.create();
  } catch (error) {
    if (ownStore) store.close();
    throw error;
  }
  const writer = new RunRecordWriter(record, (r) => maskRunRecord(r, config.secretValues), onStorageFailure);
  const emit = (event: RunEvent) => options.onEvent?.(event);
  const changed = (stepId?: string, item?: number) => {
    if (stepId === undefined) recorder.runChanged();
    else recorder.stepChanged(stepId, item);
    writer.changed();
  };
  writer.flush();
  emit({ type: 'run-started', run: record });

  const onOuterAbort = () => {
    const reason: unknown = options.signal?.reason;
    controller.abort(reason instanceof CallAbortReason ? reason : new CallAbortReason('cancelled', 'the run was cancelled'));
  };
  if (options.signal?.aborted) onOuterAbort();
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const runTimer = workflow.timeoutMs ? clock.timeout(workflow.timeoutMs) : undefined;
  const onRunTimeout = () =>
    controller.abort(new CallAbortReason('timeout', `the run exceeded its timeout of ${formatMs(workflow.timeoutMs!)}`));
  runTimer?.signal.addEventListener('abort', onRunTimeout, { once: true });

  const recordsById = new Map(record.steps.map((step) => [step.id, step]));
  const stepsById = new Map(workflow.steps.map((step) => [step.id, step]));
  const views: Record<string, StepView> = {};
  for (const step of record.steps) views[step.id] = viewOf(step);
  const refreshView = (stepRecord: StepRecord) => (views[stepRecord.id] = viewOf(stepRecord));

  // Queue mode: app calls become BullMQ jobs for `runner worker` processes. Loaded only then: bullmq is not light.
  const queued = !options.dispatch && config.queue ? new (await import('../queue/queue-dispatcher.js')).QueueDispatcher(config.queue, config) : undefined;
  const dispatch = options.dispatch ?? queued?.dispatch;
  const writeBehind = new WriteBehind(onStorageFailure);
  const callEnv: CallEnvironment = {
    config,
    apps,
    limits: options.limits,
    workflowQueue: options.workflowQueue ?? Limits.forWorkflow(workflow.concurrency),
    clock,
    policy: options.policy,
    retry: mergeRetry(config.retry, workflow.defaults.retry),
    signal: controller.signal,
    defaultTimeoutMs: workflow.defaults.timeoutMs ?? 60_000,
    writeBehind,
    // Nobody listening (the engine under `serve` and the bench): no event object per call and status.
    emit: options.onEvent ? (event) => emit({ ...event, run: record }) : () => {},
    changed,
    journal: recorder,
    ...(dispatch && { dispatch }),
    ...(options.checkTool && { checkTool: options.checkTool }),
    runId: id,
    workflowName: workflow.name,
  };
  // One context for every step (nothing writes to it; `steps` is the live views): only a status function gets its own.
  const runContext: ExpressionContext = {
    inputs: options.inputs,
    env: options.env ?? process.env,
    run: { id, dir, artifacts: config.artifacts },
    workflow: { name: workflow.name },
    trigger: record.trigger,
    steps: views,
  };

  // Connect every app this workflow uses, in parallel, while the first steps get ready.
  void apps.warm(appsCalledBy(workflow.steps), controller.signal);
  // report.html's renderer and layout library load while the apps start, not after the last step.
  const reportWriter = loadReportWriter();

  // A call waiting for the limits keeps its whole state alive: of many ready steps, only as many start as can hold a slot.
  const stepWidth = callWidth(callEnv);
  const stepGate = Number.isFinite(stepWidth) ? new Slots(stepWidth) : null;
  /** What runCall does first: the call waits for its turn (the limits, the app starting, a prompt). */
  const markQueued = (stepId: string, target: CallRecord, item?: number) => {
    target.status = 'queued';
    callEnv.emit({ type: 'step', stepId, status: 'queued', item });
    changed(stepId, item);
  };

  const runStep = async (step: Step): Promise<void> => {
    const stepRecord = recordsById.get(step.id)!;
    const setStatus = (status: StepStatus, reason?: string, error: StepRecord['error'] = null) => {
      stepRecord.status = status;
      stepRecord.error = error;
      if (status !== 'running' && status !== 'waiting' && stepRecord.startedAt) stepRecord.endedAt = iso(clock);
      refreshView(stepRecord);
      emit({ type: 'step', run: record, stepId: step.id, status, reason, error });
      changed(step.id);
    };
    if (controller.signal.aborted) return setStatus('cancelled', 'the run was stopped before this step started');

    const needs = step.needs.map((need) => recordsById.get(need)!);
    // A need waiting for an approval (or held back by one) holds this step back too: it stays pending for the resume.
    if (needs.some((need) => need.status === 'waiting' || need.status === 'pending')) return;
    // A step whose failure or denial is tolerated (continue-on-error) does not hold back what needs it.
    const tolerated = (need: StepRecord) => (need.status === 'failed' || need.status === 'denied') && stepsById.get(need.id)!.continueOnError;
    const blocking = needs.filter((need) => !(need.status === 'succeeded' || tolerated(need)));
    let context = runContext;
    if (step.if !== undefined && usesStatusFunction(step.if)) {
      const job = {
        success: blocking.length === 0,
        failure: needs.some((need) => need.status === 'failed' || need.status === 'denied'),
        cancelled: controller.signal.aborted,
      };
      context = { ...runContext, job };
    } else if (blocking.length > 0) {
      return setStatus('skipped', `needs ${blocking.map((need) => `${need.id} (${need.status})`).join(', ')}`);
    }
    if (step.if !== undefined) {
      try {
        if (!evaluateCondition(step.if, context)) return setStatus('skipped', `if: ${step.if} was false`);
      } catch (error) {
        stepRecord.startedAt = iso(clock);
        return setStatus('failed', undefined, { kind: 'input', message: `in \`if\`: ${messageOf(error)}` });
      }
    }

    stepRecord.startedAt = iso(clock);
    const stepDir = join(dir, step.id);
    const stepEnv: CallEnvironment = step.retry ? { ...callEnv, retry: mergeRetry(callEnv.retry, step.retry) } : callEnv;
    if (step.foreach === undefined) {
      const call = () => runCall(step, stepRecord, stepRecord, context, stepDir, stepEnv);
      if (stepGate && step.app !== BUILTIN_APP) {
        // Queued from here, as runCall would mark it; it starts once one of the run's calls in flight ends.
        markQueued(step.id, stepRecord);
        await stepGate.run(call);
      } else await call();
      if (stepRecord.status !== 'waiting') stepRecord.endedAt = iso(clock);
      refreshView(stepRecord);
      changed(step.id);
      return;
    }

    let items: unknown;
    try {
      items = evaluateTemplate(step.foreach, context);
    } catch (error) {
      return setStatus('failed', undefined, { kind: 'input', message: `in \`foreach\`: ${messageOf(error)}` });
    }
    if (!Array.isArray(items)) {
      return setStatus('failed', undefined, {
        kind: 'input',
        message: `\`foreach\` must evaluate to an array, got ${items === null ? 'null' : typeof items}`,
      });
    }
    const limit = step.maxItems ?? DEFAULT_MAX_ITEMS;
    if (items.length > limit) {
      return setStatus('failed', undefined, {
        kind: 'input',
        message: `\`foreach\` gave ${items.length} items, more than the limit of ${limit} (step \`max-items\`)`,
      });
    }
    // A resumed foreach step keeps the items that succeeded (or whose outcome is unknown) and runs the rest.
    const earlier = resumed?.earlierItems.get(step.id) ?? [];
    const rerunUnknown = options.resume?.rerunUnknown ?? false;
    stepRecord.status = 'running';
    stepRecord.items = items.map((_, index) => (keepsItem(earlier[index], rerunUnknown) ? earlier[index] : pendingItem(index, earlier[index])));
    emit({ type: 'step', run: record, stepId: step.id, status: 'running' });
    changed(step.id);
    // Every item to run is queued from the start, but only as many are started as can hold a slot at once:
    // thousands of calls started together would each keep their state alive while they wait.
    const toRun: number[] = [];
    for (const item of stepRecord.items) {
      if (item.status === 'pending') {
        toRun.push(item.index);
        markQueued(step.id, item, item.index);
      } else changed(step.id, item.index);
    }
    await runBounded(toRun, callWidth(callEnv, step.app), (index) =>
      runCall(step, stepRecord, stepRecord.items![index], { ...context, item: items[index], index }, itemDir(stepDir, index), stepEnv, index),
    );
    const results = stepRecord.items;
    stepRecord.attempts = results.reduce((sum, entry) => sum + entry.attempts, 0);
    stepRecord.outputs = results.map((entry) => entry.outputs);
    stepRecord.text = results.map((entry) => entry.text);
    stepRecord.files = results.flatMap((entry) => entry.files);
    stepRecord.args = results.map((entry) => entry.args);
    const failed = results.find((entry) => entry.status !== 'succeeded');
    const status: StepStatus = !failed
      ? 'succeeded'
      : results.some((entry) => entry.status === 'cancelled')
        ? 'cancelled'
        : results.some((entry) => entry.status === 'waiting')
          ? 'waiting'
          : results.every((entry) => entry.status === 'denied')
            ? 'denied'
            : 'failed';
    const error = failed && status !== 'waiting' ? { ...failed.error!, message: `item ${failed.index}: ${failed.error?.message ?? failed.status}` } : null;
    setStatus(status, undefined, error);
  };

  // Dependency-driven scheduling: a step starts when its last need finishes.
  const dependents = new Map<string, string[]>();
  const waitingOn = new Map<string, number>();
  for (const step of workflow.steps) {
    waitingOn.set(step.id, step.needs.length);
    for (const need of step.needs) {
      const list = dependents.get(need) ?? [];
      list.push(step.id);
      dependents.set(need, list);
    }
  }
  await new Promise<void>((resolve) => {
    let remaining = workflow.steps.length;
    if (remaining === 0) return resolve();
    const settle = (step: Step) => {
      for (const dependent of dependents.get(step.id) ?? []) {
        const left = waitingOn.get(dependent)! - 1;
        waitingOn.set(dependent, left);
        if (left === 0) launch(stepsById.get(dependent)!);
      }
      if (--remaining === 0) resolve();
    };
    const launch = (step: Step) => {
      // A resumed run's kept steps are done already: they only release their dependents.
      if (kept.has(step.id)) return settle(step);
      runStep(step)
        .catch((error: unknown) => {
          const stepRecord = recordsById.get(step.id)!;
          stepRecord.status = 'failed';
          stepRecord.error = { kind: 'input', message: `internal error: ${messageOf(error)}` };
          refreshView(stepRecord);
        })
        .finally(() => settle(step));
    };
    for (const step of workflow.steps) if (step.needs.length === 0) launch(step);
  });

  await queued?.close();
  options.signal?.removeEventListener('abort', onOuterAbort);
  runTimer?.signal.removeEventListener('abort', onRunTimeout);
  runTimer?.clear();

  for (const [name, info] of apps.infos) {
    if (workflow.steps.some((step) => step.app === name)) record.apps[name] = { protocolVersion: info.protocolVersion, server: info.server };
  }
  record.status = finalStatus(record, workflow, controller.signal);
  if (controller.signal.aborted && controller.signal.reason instanceof CallAbortReason) {
    record.error = { message: controller.signal.reason.message };
  }
  // A waiting run has not ended: its resume (or serve) ends it.
  record.endedAt = record.status === 'waiting' ? null : iso(clock);
  record.durationMs = (previous ? activeMsBefore(previous) : 0) + (clock.now() - sessionStartMs);
  try {
    writeBehind.flush();
  } catch (error) {
    onStorageFailure(error);
  }
  if (storageFailure) {
    record.status = 'failed';
    record.error = { message: `the run could not be recorded: ${storageFailure}` };
  }
  changed();
  recorder.close();
  try {
    store.releaseRun(id, owner);
  } catch {
    // The record itself is written; a stale owner only means resume checks whether this process is alive.
  } finally {
    if (ownStore) store.close();
  }
  writer.flush();
  emit({ type: 'run-finished', run: record });
  await writeReport(reportWriter, record, config, options.onWarning);
  return record;
}

type ReportWriter = Promise<typeof import('../report/html/write-report.js')>;

/**
 * Starts loading report.html's writer (a first import costs about 30 ms of
 * CPU): while the apps start, the process is otherwise waiting. A module that
 * fails to load is reported by writeReport.
 */
function loadReportWriter(): ReportWriter {
  const loading = import('../report/html/write-report.js');
  loading.catch(() => {});
  return loading;
}

/** Writes report.html once the record is final. Never fails the run: a problem is a warning. */
async function writeReport(writer: ReportWriter, record: RunRecord, config: RunnerConfig, onWarning?: (message: string) => void): Promise<void> {
  try {
    const { writeRunReport } = await writer;
    await writeRunReport(maskRunRecord(record, config.secretValues), { artifacts: config.artifacts });
  } catch (error) {
    const message = `report.html of run ${record.id} was not written: ${messageOf(error)}`;
    (onWarning ?? writeWarning)(message);
  }
}

/**
 * How many calls (of `app`, or of any app) can be in flight at once: more
 * started together would only wait for a slot.
 */
function callWidth(env: CallEnvironment, app?: string): number {
  if (app === BUILTIN_APP) return Number.POSITIVE_INFINITY; // built-in tools take no slots
  // In queue mode the workers hold the process's and the app's limits; the coordinator holds the workflow's.
  if (env.dispatch) return env.workflowQueue?.limit ?? Number.POSITIVE_INFINITY;
  return env.limits.widthFor(env.workflowQueue, app);
}

/** Runs `task` for each of `indexes` in order, at most `width` at a time. */
async function runBounded(indexes: number[], width: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < indexes.length) await task(indexes[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(width, indexes.length) }, worker));
}

function finalStatus(record: RunRecord, workflow: Workflow, signal: AbortSignal): RunRecord['status'] {
  const reason: unknown = signal.aborted ? signal.reason : undefined;
  if (reason instanceof CallAbortReason && reason.kind === 'cancelled') return 'cancelled';
  const tolerated = new Set(workflow.steps.filter((step) => step.continueOnError).map((step) => step.id));
  const failed = record.steps.some(
    (step) => (step.status === 'failed' || step.status === 'denied' || step.status === 'cancelled') && !tolerated.has(step.id),
  );
  if (reason) return 'failed';
  // Steps waiting for an approval leave the run open, whatever else failed: its resume decides how it ends.
  if (record.steps.some((step) => step.status === 'waiting')) return 'waiting';
  return failed ? 'failed' : 'succeeded';
}

function viewOf(step: StepRecord): StepView {
  return { status: step.status, outputs: step.outputs, text: step.text, files: step.files, error: step.error };
}

function iso(clock: Clock): string {
  return isoTime(clock.now());
}
