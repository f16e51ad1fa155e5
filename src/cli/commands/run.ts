import { CallAbortReason } from '../../apps/abort-reason.js';
import { killAllTracked } from '../../apps/child-reaper.js';
import { ExitCode, type Diagnostic } from '../../errors.js';
import { createProgressReporter } from '../../report/progress.js';
import { loadRun, runOnce } from '../../runner.js';
import type { RunRecord } from '../../artifacts/run-record.js';
import type { RunnerConfig } from '../../config/types.js';
import type { Workflow } from '../../workflow/types.js';
import type { PolicyOverrides, RunEvent } from '../../scheduler/events.js';
import { approverName } from '../../scheduler/approval.js';
import { maskRunRecord, maskSecretsDeep } from '../../secrets.js';
import { createTerminalPrompts } from '../terminal-prompts.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { reportWarnings } from '../report-error.js';
import { jsonForOutput, safeForTerminal } from '../../terminal-text.js';

export interface RunCommandOptions extends GlobalOptions {
  input: string[];
  inputs?: string;
  json?: boolean;
  yes?: boolean;
  allow: string[];
  dryRun?: boolean;
  /** `runner resume ID`: the run to continue, and whether steps with an unknown outcome run again. */
  resume?: { id: string; rerunUnknown: boolean };
}

/** `runner run WORKFLOW`: returns the exit code. */
export async function runCommand(workflowPath: string, options: RunCommandOptions, io: CliIO): Promise<number> {
  const interactive = io.stderrIsTTY && Boolean(io.stdin.isTTY);
  const base = { cwd: io.cwd, env: io.env, inProcessApps: io.inProcessApps, configPath: options.config, workflowPath, inputPairs: options.input, inputsFile: options.inputs };
  const policy: PolicyOverrides = { yes: Boolean(options.yes), allow: options.allow };

  if (options.dryRun) {
    const { config, workflow } = await loadRun(base);
    reportWarnings([...config.warnings, ...(workflow.warnings ?? [])], io.stderr);
    // Loaded here only: a run loads the lock check while its apps start, and never the planner (with argument checking it brings ajv).
    const [{ Composition }, { findLockDrift, formatDrift }, { formatPlan }, { planRun }] = await Promise.all([
      import('../../composition.js'),
      import('../../lock/index.js'),
      import('../../report/plan.js'),
      import('../../scheduler/plan.js'),
    ]);
    const context = new Composition(config, { inProcessApps: io.inProcessApps });
    try {
      const plan = await planRun(workflow, config, context.apps(), policy, { interactive });
      // The tools are listed already: what the run would say of runner.lock costs no round trip.
      const lock = await findLockDrift({ config, workflows: [workflow], apps: context.apps() });
      const drifts = lock?.drifts ?? [];
      if (options.json) io.stdout(jsonForOutput(maskSecretsDeep({ ...plan, lock: lock ? { file: lock.file, drifts } : null }, config.secretValues)));
      // The apps' names, versions and error messages are theirs: what would steer a terminal is escaped.
      else io.stdout(safeForTerminal(formatPlan(plan)) + (drifts.length > 0 ? `\nthe tools changed since ${lock!.file} was written${drifts.some((drift) => drift.stops) ? '; the run would stop before its first call (`runner lock --update` accepts the changes)' : ''}:\n${formatDrift(drifts)}` : ''));
      // A plan that cannot run as it stands (a problem, a call the policy would deny, a tool changed since the lock) fails, so CI can gate on it.
      const blocked = plan.steps.some((step) => step.problems.length > 0 || step.policy?.action === 'deny') || drifts.some((drift) => drift.stops);
      return blocked ? ExitCode.stepFailed : ExitCode.succeeded;
    } finally {
      await context.close();
    }
  }

  const { record, secretValues } = await executeInTerminal(io, policy, (hooks) =>
    runOnce({ ...base, policy, resume: options.resume, ...hooks }),
  );
  if (options.json) io.stdout(jsonForOutput(maskRunRecord(record, secretValues)));
  return exitCodeOfRun(record);
}

/** What a run started from the terminal is given: a signal for Ctrl-C, and listeners for progress. */
export interface TerminalHooks {
  signal: AbortSignal;
  onLoaded: (loaded: { config: RunnerConfig; workflow?: Workflow; warnings?: Diagnostic[] }) => void;
  onEvent: (event: RunEvent) => void;
  onWarning: (message: string) => void;
}

/**
 * Runs `start` the way `runner run` does: the first Ctrl-C (or SIGTERM,
 * SIGHUP) cancels in-flight calls, a second exits at once; on a TTY the
 * policy's asks prompt; progress goes to stderr; the config's warnings are
 * printed unless `warned` (the caller printed them already).
 */
export async function executeInTerminal(
  io: CliIO,
  policy: PolicyOverrides,
  start: (hooks: TerminalHooks) => Promise<RunRecord>,
  options: { warned?: boolean } = {},
): Promise<{ record: RunRecord; secretValues: readonly string[] }> {
  const interactive = io.stderrIsTTY && Boolean(io.stdin.isTTY);
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts > 1) {
      killAllTracked();
      process.exit(ExitCode.interrupted);
    }
    io.stderr(`\n${signal}: cancelling the run (again to exit at once)\n`);
    controller.abort(new CallAbortReason('cancelled', `interrupted by ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A closed terminal sends SIGHUP; left to its default, the runner would die without closing its apps.
  process.on('SIGHUP', onSignal);
  try {
    let reporter: ((event: RunEvent) => void) | undefined;
    let secretValues: readonly string[] = [];
    const record = await start({
      signal: controller.signal,
      onLoaded: ({ config, workflow, warnings }) => {
        if (!options.warned) reportWarnings([...config.warnings, ...(workflow?.warnings ?? [])], io.stderr);
        reportWarnings(warnings ?? [], io.stderr);
        const prompts = interactive ? createTerminalPrompts(io, config.secretValues) : undefined;
        if (prompts) Object.assign(policy, { approver: prompts.approver, prompter: prompts.prompter, user: approverName(io.env) });
        reporter = createProgressReporter({ write: io.stderr, tty: io.stderrIsTTY, secretValues: config.secretValues, paused: prompts?.isPrompting });
        secretValues = config.secretValues;
      },
      onEvent: (event) => reporter?.(event),
      onWarning: (message) => io.stderr(`warning: ${message}\n`),
    });
    return { record, secretValues };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
  }
}

/** Exit code of a finished run: 0 succeeded, 130 cancelled, 1 otherwise. */
export function exitCodeOfRun(record: RunRecord): number {
  if (record.status === 'cancelled') return ExitCode.interrupted;
  return record.status === 'succeeded' ? ExitCode.succeeded : ExitCode.stepFailed;
}
