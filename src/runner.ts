import { join, resolve } from 'node:path';
import { AppRegistry } from './apps/registry.js';
import { createRunId } from './artifacts/run-id.js';
import type { RunRecord } from './artifacts/run-record.js';
import { systemClock, type Clock } from './clock.js';
import { loadConfig } from './config/load.js';
import type { RunnerConfig } from './config/types.js';
import type { PolicyOverrides, RunEvent } from './scheduler/events.js';
import { executeRun } from './scheduler/executor.js';
import { Limits } from './scheduler/limits.js';
import { findRun } from './store/run-history.js';
import { RunnerError } from './errors.js';
import { readInputsFile, resolveInputs } from './workflow/inputs.js';
import { loadWorkflow } from './workflow/load.js';
import type { Workflow } from './workflow/types.js';

/** Where to find the config, and the process facts every command needs. */
export interface RunnerContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  configPath?: string;
  clock?: Clock;
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
  /** Called after loading, before anything runs (for progress setup). */
  onLoaded?: (loaded: { config: RunnerConfig; workflow: Workflow }) => void;
  /** `runner resume`: continue this run instead of starting a new one. */
  resume?: { id: string; rerunUnknown: boolean };
}

/** Loads config, workflow and inputs; throws RunnerError (exit 2) before anything runs. */
export async function loadRun(options: RunnerContext & { workflowPath: string; inputPairs?: string[]; inputsFile?: string }) {
  const config = await loadConfig({ configPath: options.configPath, cwd: options.cwd, env: options.env });
  const workflow = await loadWorkflow(resolve(options.cwd, options.workflowPath), config);
  const inputsFile = options.inputsFile ? resolve(options.cwd, options.inputsFile) : undefined;
  const fromFile = inputsFile ? await readInputsFile(inputsFile) : {};
  const inputs = resolveInputs(workflow, fromFile, { cliPairs: options.inputPairs ?? [], file: inputsFile });
  return { config, workflow, inputs };
}

/** `runner run`: runs a workflow once and resolves with its final record. */
export async function runOnce(options: RunOnceOptions): Promise<RunRecord> {
  const { config, workflow, inputs, previous } = options.resume ? await loadResume(options, options.resume.id) : { ...(await loadRun(options)), previous: undefined };
  options.onLoaded?.({ config, workflow });
  const clock = options.clock ?? systemClock;
  const runId = previous?.id ?? createRunId(clock.now());
  const apps = new AppRegistry({ config, logDir: join(config.artifacts, workflow.name, runId, 'logs') });
  try {
    return await executeRun({
      workflow,
      config,
      apps,
      limits: new Limits(config),
      inputs,
      policy: options.policy,
      clock,
      signal: options.signal,
      env: options.env,
      runId,
      resume: previous ? { record: previous, rerunUnknown: options.resume!.rerunUnknown } : undefined,
      onEvent: options.onEvent,
    });
  } finally {
    await apps.closeAll();
  }
}

/** Loads what `runner resume ID` continues: the run record, and its workflow file as it is now. */
async function loadResume(options: RunnerContext, id: string) {
  const config = await loadConfig({ configPath: options.configPath, cwd: options.cwd, env: options.env });
  const previous = findRun(config.artifacts, id);
  if (!previous.workflowFile) {
    throw new RunnerError('usage', `run ${previous.id} does not say which workflow file it came from, so it cannot be resumed`);
  }
  if (previous.status === 'succeeded') {
    throw new RunnerError('usage', `run ${previous.id} already succeeded; there is nothing to resume`, { hint: 'start a new run with `runner run`' });
  }
  const workflow = await loadWorkflow(previous.workflowFile, config);
  return { config, workflow, inputs: previous.inputs, previous };
}
