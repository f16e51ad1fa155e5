import { isAbsolute, join, relative, resolve } from 'node:path';
import { EarlyApps } from './apps/app-process.js';
import type { AppRegistry } from './apps/registry.js';
import { connectInProcess, type InProcessApps } from './apps/in-process-apps.js';
import { appsCalledBy } from './builtins/catalog.js';
import { createRunId } from './artifacts/run-id.js';
import type { RunRecord } from './artifacts/run-record.js';
import { systemClock, type Clock } from './clock.js';
import { loadConfig } from './config/load.js';
import type { RunnerConfig } from './config/types.js';
import type { PolicyOverrides, RunEvent } from './scheduler/events.js';
import { currentOwner } from './store/run-owner.js';
import type { RunStore, StoredRun } from './store/run-store.js';
import { answerCommands } from './scheduler/approval.js';
import { matchesGlob } from './scheduler/policy.js';
import { RunnerError, type Diagnostic } from './errors.js';
import { readInputsFile, readValueFiles, resolveInputs } from './workflow/inputs.js';
import { loadWorkflow } from './workflow/load.js';
import type { Workflow } from './workflow/types.js';

/** Where to find the config, and the process facts every command needs. */
export interface RunnerContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  configPath?: string;
  clock?: Clock;
  /** Apps served in this process (CliIO.inProcessApps), never started. */
  inProcessApps?: InProcessApps;
}

export interface RunOnceOptions extends RunnerContext {
  workflowPath: string;
  /** Raw `-i key=value` pairs. */
  inputPairs?: string[];
  /** `--inputs FILE.json`. */
  inputsFile?: string;
  policy: PolicyOverrides;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  /** Called after loading and the lock check, before anything runs (for progress setup); `warnings`: lock changes that stop nothing. */
  onLoaded?: (loaded: { config: RunnerConfig; workflow: Workflow; warnings?: Diagnostic[] }) => void;
  /** `runner resume`: continue this run instead of starting a new one. */
  resume?: { id: string; rerunUnknown: boolean };
  /** Told about problems that fail nothing (report.html not written, an app that had to be signalled to stop). Default: `warning:` lines on stderr. */
  onWarning?: (message: string) => void;
}

/** Loads config, workflow and inputs; throws RunnerError (exit 2) before anything runs. */
export async function loadRun(options: RunnerContext & { workflowPath: string; inputPairs?: string[]; inputsFile?: string }) {
  const config = await loadConfig({ configPath: options.configPath, cwd: options.cwd, env: options.env });
  const workflow = await loadWorkflow(resolve(options.cwd, options.workflowPath), config, { env: options.env });
  const inputsFile = options.inputsFile ? resolve(options.cwd, options.inputsFile) : undefined;
  const fromFile = inputsFile ? await readInputsFile(inputsFile) : {};
  const cliPairs = await readValueFiles(options.inputPairs ?? [], options.cwd, '-i ');
  const inputs = resolveInputs(workflow, fromFile, { cliPairs, file: inputsFile });
  return { config, workflow, inputs };
}

/**
 * The engine, the run store (SQLite's among them) and the lock check: over
 * half the modules a run loads, imported once a run has started its apps.
 * They load while the apps start, which a short run otherwise waits for with
 * nothing to do.
 */
async function loadEngine() {
  const [{ executeRun }, { Limits }, { findRun, openRunStore }, { takeOverRun }, { expireApprovals }, { assertNoLockDrift, createToolCheck, driftWarning }] = await Promise.all([
    import('./scheduler/executor.js'),
    import('./scheduler/limits.js'),
    import('./store/run-history.js'),
    import('./store/take-over.js'),
    import('./scheduler/answer-approval.js'),
    import('./lock/index.js'),
  ]);
  return { executeRun, Limits, findRun, openRunStore, takeOverRun, expireApprovals, assertNoLockDrift, createToolCheck, driftWarning };
}

type Engine = Awaited<ReturnType<typeof loadEngine>>;

/** `runner run`: runs a workflow once and resolves with its final record. */
export async function runOnce(options: RunOnceOptions): Promise<RunRecord> {
  const clock = options.clock ?? systemClock;
  const loaded = options.resume ? await loadResume(options, options.resume.id, clock, options.policy) : { ...(await loadRun(options)), previous: undefined, store: undefined };
  const { config, workflow, inputs, previous } = loaded;
  const runId = previous?.id ?? createRunId(clock.now());
  // Starting an app is most of a short run: their processes start now, before the SDK is even loaded, and
  // boot while it loads, the store opens and the run is set up; connecting to them follows once it has.
  const called = appsCalledBy(workflow.steps);
  const served = options.inProcessApps;
  const early = EarlyApps.start(config, served ? called.filter((name) => !(config.apps[name] && served.serves(config.apps[name]))) : called);
  let apps: AppRegistry;
  try {
    const { AppRegistry } = await import('./apps/registry.js');
    apps = new AppRegistry({
      config,
      logDir: join(config.artifacts, workflow.name, runId, 'logs'),
      early,
      connectTransport: connectInProcess(options.inProcessApps),
      onWarning: options.onWarning,
    });
  } catch (error) {
    early.discard();
    throw error;
  }
  void apps.warm(called, options.signal);
  let store: RunStore;
  let engine: Engine;
  try {
    engine = await loadEngine();
    store = loaded.store ?? engine.openRunStore(config, clock.now());
  } catch (error) {
    await apps.closeAll();
    throw error;
  }
  const owner = currentOwner(clock.now());
  try {
    try {
      // With a runner.lock, every app the run uses is connected and its tools compared before the first call.
      const lock = await engine.assertNoLockDrift({ config, workflows: [workflow], apps, signal: options.signal });
      options.onLoaded?.({ config, workflow, warnings: lock?.drifts.map(engine.driftWarning) });
      return await engine.executeRun({
        checkTool: lock && engine.createToolCheck(lock.lock),
        workflow,
        config,
        apps,
        limits: new engine.Limits(config),
        inputs,
        policy: options.policy,
        clock,
        signal: options.signal,
        env: options.env,
        runId,
        store,
        owner,
        resume: previous ? { record: previous, rerunUnknown: options.resume!.rerunUnknown } : undefined,
        onEvent: options.onEvent,
        onWarning: options.onWarning,
      });
    } finally {
      await apps.closeAll();
    }
  } finally {
    if (previous) store.releaseRun(previous.id, owner); // when the run never started; a no-op otherwise
    store.close();
  }
}

export interface RunLoadedOptions extends Pick<RunOnceOptions, 'policy' | 'signal' | 'onEvent' | 'onLoaded' | 'onWarning' | 'clock' | 'env'> {
  config: RunnerConfig;
  workflow: Workflow;
  inputs: Record<string, unknown>;
  /** Apps the caller opened already (their logs under the run's folder), closed here. */
  apps: AppRegistry;
  runId: string;
}

/** `runner call`: runs a workflow built in memory once, like runOnce, with apps the caller opened to read a tool's schema. */
export async function runLoaded(options: RunLoadedOptions): Promise<RunRecord> {
  const { config, workflow, apps } = options;
  const clock = options.clock ?? systemClock;
  const { executeRun, Limits, openRunStore } = await loadEngine();
  const store = openRunStore(config, clock.now());
  try {
    options.onLoaded?.({ config, workflow });
    return await executeRun({
      workflow,
      config,
      apps,
      limits: new Limits(config),
      inputs: options.inputs,
      policy: options.policy,
      clock,
      signal: options.signal,
      env: options.env,
      runId: options.runId,
      store,
      owner: currentOwner(clock.now()),
      onEvent: options.onEvent,
      onWarning: options.onWarning,
    });
  } finally {
    await apps.closeAll();
    store.close();
  }
}

/**
 * Loads what `runner resume ID` continues: the run from the store (never from
 * a file under artifacts, which an app could have written), made this
 * process's own, and its workflow file as it is now.
 */
async function loadResume(options: RunnerContext, id: string, clock: Clock, policy: PolicyOverrides) {
  const config = await loadConfig({ configPath: options.configPath, cwd: options.cwd, env: options.env });
  const engine = await loadEngine();
  const { findRun, openRunStore, takeOverRun } = engine;
  const store = openRunStore(config, clock.now());
  try {
    let stored = findRun(store, config.artifacts, id);
    if (stored.run.status === 'waiting') stored = checkAnswered(store, config, stored, clock.now(), policy, engine);
    const { run } = stored;
    if (run.status === 'succeeded') {
      throw new RunnerError('usage', `run ${run.id} already succeeded; there is nothing to resume`, { hint: 'start a new run with `runner run`' });
    }
    const workflowFile = trustedWorkflowFile(stored, config);
    const workflow = await loadWorkflow(workflowFile, config, { env: options.env });
    if (workflow.name !== run.workflow) {
      throw new RunnerError('usage', `run ${run.id} is a run of \`${run.workflow}\`, but ${workflowFile} is now workflow \`${workflow.name}\``, {
        hint: 'start a new run with `runner run`',
      });
    }
    const owner = currentOwner(clock.now());
    // In queue mode the calls in flight when the run's coordinator died went on without it: their jobs hold the outcomes.
    const recovered = config.queue ? await (await import('./queue/recover-calls.js')).recoverForResume(store, run.id, owner, clock, config.queue, config) : undefined;
    const previous = takeOverRun(store, stored, { owner, nowMs: clock.now(), secrets: config.secretEntries, recovered });
    return { config, workflow, inputs: previous.inputs, previous, store };
  } catch (error) {
    store.close();
    throw error;
  }
}

/**
 * A waiting run is resumed once one of its approvals is answered (an expired
 * one counts: it is recorded as expired now, and its step ends denied), or
 * when --yes or --allow allows a waiting step anyway. Otherwise nothing
 * happens: a `waiting` error (exit 1) says what it waits for.
 */
function checkAnswered(
  store: RunStore,
  config: RunnerConfig,
  stored: StoredRun & { id: string },
  nowMs: number,
  policy: PolicyOverrides,
  { expireApprovals, findRun }: Pick<Engine, 'expireApprovals' | 'findRun'>,
): StoredRun & { id: string } {
  if (expireApprovals(store, stored.id, nowMs).length > 0) stored = findRun(store, config.artifacts, stored.id);
  const waiting = stored.steps.map((step) => step.record).filter((step) => step.status === 'waiting');
  const allowed = (uses: string) => policy.yes || policy.allow.some((glob) => matchesGlob(glob, uses));
  if (waiting.length === 0 || waiting.some((step) => step.approval?.decision || allowed(step.uses))) return stored;
  const each = waiting.map((step) => `${step.id}${step.approval ? ` (expires ${step.approval.expiresAt})` : ''}`);
  throw new RunnerError('waiting', `run ${stored.id} is still waiting for an approval of ${each.join(', ')}; nothing was run`, {
    hint: `answer with ${answerCommands(stored.id, waiting[0].id)}, then resume it`,
  });
}

/**
 * The workflow file a run came from. The store recorded it for runs it saw
 * start; a run imported from an old run.json (which anything could have
 * written) is resumed only from a workflow file inside the config folder.
 */
function trustedWorkflowFile(stored: StoredRun, config: RunnerConfig): string {
  const file = stored.run.workflowFile;
  if (!file) {
    throw new RunnerError('usage', `run ${stored.run.id} does not say which workflow file it came from, so it cannot be resumed`, {
      hint: 'a run of `runner call` has no workflow file: call the tool again',
    });
  }
  const inside = relative(config.dir, file);
  if (stored.imported && (inside.startsWith('..') || isAbsolute(inside))) {
    throw new RunnerError('usage', `run ${stored.run.id} was recorded before the run store existed, and its workflow file ${file} is outside ${config.dir}; it is not resumed`, {
      hint: 'start a new run with `runner run`',
    });
  }
  return file;
}
