import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { diagnosticsOf, RunnerError, throwOnDiagnostics, type Diagnostic } from '../errors.js';
import { showPath } from '../config/load.js';
import type { RunnerConfig } from '../config/types.js';
import { loadWorkflow } from '../workflow/load.js';
import type { Workflow } from '../workflow/types.js';

export type TriggerKind = 'watch' | 'schedule';

export interface LoadTriggeredOptions {
  /** Workflow files named on the command line; none: every `workflows/*.yaml` under the config folder. */
  files: string[];
  config: RunnerConfig;
  cwd: string;
  /** The trigger kinds the command serves. */
  kinds: TriggerKind[];
  /** The environment `env.X` reads (checked at load: an unset one is a warning). */
  env?: Record<string, string | undefined>;
}

const TRIGGER_KEYS: Record<TriggerKind, string> = { watch: 'on.watch', schedule: 'on.schedule' };

/**
 * The workflows a long-running runner serves. Named files must each have one
 * of the served triggers; by default the workflows folder is scanned and the
 * ones without such a trigger are left out. Every problem in every file is
 * reported at once (RunnerError, exit 2), before anything starts.
 */
export async function loadTriggeredWorkflows(options: LoadTriggeredOptions): Promise<{ served: Workflow[]; skipped: Workflow[] }> {
  const { config, kinds } = options;
  const explicit = options.files.length > 0;
  const folder = join(config.dir, 'workflows');
  const files = explicit ? options.files.map((file) => resolve(options.cwd, file)) : await listWorkflowFiles(folder);
  const wanted = kinds.map((kind) => `\`${TRIGGER_KEYS[kind]}\``).join(' or ');
  if (files.length === 0) throw new RunnerError('usage', `no workflow files in ${showPath(folder, options.cwd)}`, { hint: 'name workflow files on the command line' });

  const loaded = await loadWorkflowFiles(files, config, options.env);
  const diagnostics: Diagnostic[] = [];

  const served = loaded.filter((workflow) => hasTrigger(workflow, kinds));
  const skipped = loaded.filter((workflow) => !hasTrigger(workflow, kinds));
  if (explicit && skipped.length > 0) {
    throw new RunnerError('usage', `${skipped.map((workflow) => showPath(workflow.file, options.cwd)).join(', ')} ${skipped.length === 1 ? 'has' : 'have'} no ${wanted} trigger, so there is nothing to wait for`, {
      hint: 'run it once with `runner run`, or add a trigger under `on:`',
    });
  }
  if (served.length === 0) {
    throw new RunnerError('usage', `no workflow in ${showPath(folder, options.cwd)} has an ${wanted} trigger`, { hint: 'add one under `on:`, or name workflow files on the command line' });
  }
  const byName = new Map<string, Workflow>();
  for (const workflow of served) {
    const first = byName.get(workflow.name);
    if (first) {
      diagnostics.push({
        location: workflow.location,
        message: `workflow name \`${workflow.name}\` is also the name of ${showPath(first.file, options.cwd)}; served workflows need distinct names (runs, locks and content markers are kept by name)`,
      });
    }
    byName.set(workflow.name, workflow);
    for (const [name, spec] of Object.entries(workflow.inputs)) {
      if (spec.required && spec.default === undefined) {
        diagnostics.push({
          location: spec.location,
          message: `input \`${name}\` of workflow \`${workflow.name}\` is required and has no default; a triggered run has no way to pass it`,
          hint: 'give it a `default:`',
        });
      }
    }
  }
  throwOnDiagnostics('workflow', diagnostics);
  return { served, skipped };
}

function hasTrigger(workflow: Workflow, kinds: TriggerKind[]): boolean {
  return (kinds.includes('watch') && workflow.on.watch !== undefined) || (kinds.includes('schedule') && workflow.on.schedule.length > 0);
}

/**
 * Loads workflow files, reporting every problem in every file at once
 * (RunnerError, exit 2) instead of stopping at the first file.
 */
export async function loadWorkflowFiles(files: readonly string[], config: RunnerConfig, env?: Record<string, string | undefined>): Promise<Workflow[]> {
  const diagnostics: Diagnostic[] = [];
  const loaded: Workflow[] = [];
  for (const file of files) {
    try {
      loaded.push(await loadWorkflow(file, config, { env }));
    } catch (error) {
      if (!(error instanceof RunnerError)) throw error;
      diagnostics.push(...diagnosticsOf(error));
    }
  }
  throwOnDiagnostics('workflow', diagnostics);
  return loaded;
}

/** The `*.yaml` and `*.yml` files of a folder, sorted; none when it does not exist. */
export async function listWorkflowFiles(folder: string): Promise<string[]> {
  try {
    const names = await readdir(folder);
    return names.filter((name) => /\.ya?ml$/.test(name)).sort().map((name) => join(folder, name));
  } catch {
    return [];
  }
}
