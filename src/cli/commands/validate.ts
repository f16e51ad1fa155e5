import { resolve } from 'node:path';
import { AppRegistry } from '../../apps/registry.js';
import { loadConfig } from '../../config/load.js';
import { ExitCode, formatDiagnostic, formatLocation, RunnerError } from '../../errors.js';
import { planRun } from '../../scheduler/plan.js';
import { loadWorkflow } from '../../workflow/load.js';
import type { Workflow } from '../../workflow/types.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { reportWarnings } from '../report-error.js';

/** `runner validate WORKFLOW... [--online]`: every problem in every file, exit 2 when there is one. */
export async function validateCommand(files: string[], options: GlobalOptions & { online?: boolean }, io: CliIO): Promise<number> {
  const config = await loadConfig({ configPath: options.config, cwd: io.cwd, env: io.env });
  reportWarnings(config.warnings, io.stderr);
  let problems = 0;
  const loaded: Workflow[] = [];
  for (const file of files) {
    try {
      loaded.push(await loadWorkflow(resolve(io.cwd, file), config));
    } catch (error) {
      if (!(error instanceof RunnerError)) throw error;
      const diagnostics = error.diagnostics.length > 0 ? error.diagnostics : [{ message: error.message, location: error.location, hint: error.hint }];
      for (const diagnostic of diagnostics) io.stderr(formatDiagnostic(diagnostic) + '\n');
      problems += diagnostics.length;
    }
  }
  if (options.online && loaded.length > 0) {
    const apps = new AppRegistry({ config });
    try {
      for (const workflow of loaded) {
        const plan = await planRun(workflow, config, apps, { yes: false, allow: [] });
        for (const step of plan.steps) {
          const source = workflow.steps.find((candidate) => candidate.id === step.id)!;
          for (const problem of step.problems) {
            const at = source.keyLocations.with && !problem.includes('has no tool') && !problem.includes('failed to start') ? source.keyLocations.with : (source.keyLocations.uses ?? source.location);
            io.stderr(`${formatLocation(at)}: step \`${step.id}\`: ${problem}\n`);
            problems++;
          }
        }
      }
    } finally {
      await apps.closeAll();
    }
  }
  for (const workflow of loaded) io.stdout(`ok ${workflow.file} (${workflow.steps.length} steps)\n`);
  if (problems > 0) {
    io.stderr(`${problems} problem${problems === 1 ? '' : 's'} found\n`);
    return ExitCode.invalid;
  }
  return ExitCode.succeeded;
}
