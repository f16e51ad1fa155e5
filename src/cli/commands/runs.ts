import { loadConfig } from '../../config/load.js';
import { ExitCode } from '../../errors.js';
import { summaryLine } from '../../report/progress.js';
import { findRun, listRuns } from '../../store/run-history.js';
import type { CliIO, GlobalOptions } from '../io.js';

/** `runner runs [--json]`: the run history, newest first. */
export async function runsCommand(options: GlobalOptions & { json?: boolean }, io: CliIO): Promise<number> {
  const config = await loadConfig({ configPath: options.config, cwd: io.cwd, env: io.env });
  const runs = listRuns(config.artifacts);
  if (options.json) {
    io.stdout(
      JSON.stringify(
        runs.map(({ id, workflow, status, trigger, startedAt, endedAt, dir }) => ({ id, workflow, status, trigger, startedAt, endedAt, dir })),
        null,
        2,
      ) + '\n',
    );
    return ExitCode.succeeded;
  }
  if (runs.length === 0) io.stderr(`no runs under ${config.artifacts}\n`);
  for (const run of runs) {
    io.stdout(`${run.id}  ${run.workflow.padEnd(20)} ${run.status.padEnd(9)} ${run.trigger.type.padEnd(8)} ${run.startedAt}\n`);
  }
  return ExitCode.succeeded;
}

/** `runner runs show ID [--json]`: one run record. */
export async function showRunCommand(id: string, options: GlobalOptions & { json?: boolean }, io: CliIO): Promise<number> {
  const config = await loadConfig({ configPath: options.config, cwd: io.cwd, env: io.env });
  const run = findRun(config.artifacts, id);
  if (options.json) {
    io.stdout(JSON.stringify(run, null, 2) + '\n');
    return ExitCode.succeeded;
  }
  io.stdout(`${summaryLine(run)}\n  workflow: ${run.workflow}\n  dir: ${run.dir}\n  trigger: ${JSON.stringify(run.trigger)}\n`);
  for (const step of run.steps) {
    const error = step.error ? `  [${step.error.kind}${step.error.outcome === 'unknown' ? ', outcome unknown' : ''}] ${step.error.message}` : '';
    io.stdout(`  ${step.id.padEnd(20)} ${step.status.padEnd(9)} attempts ${step.attempts}${error}\n`);
  }
  return ExitCode.succeeded;
}
