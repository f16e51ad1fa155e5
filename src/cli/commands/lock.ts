import { join, resolve } from 'node:path';
import { showPath } from '../../config/load.js';
import { ExitCode, RunnerError } from '../../errors.js';
import { formatDrift, planLock, writeLockFile, type LockPlan } from '../../lock/index.js';
import { listWorkflowFiles, loadWorkflowFiles } from '../../triggers/discover.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { openCommandContext } from '../context.js';
import { jsonForOutput } from '../../terminal-text.js';

export interface LockCommandOptions extends GlobalOptions {
  update?: boolean;
  json?: boolean;
}

/**
 * `runner lock [WORKFLOW...]`: writes runner.lock beside the config. With no
 * workflow named, from every workflow in `workflows/` (the lock is rewritten:
 * tools no longer called are dropped); with some, their tools are added or
 * replaced and the rest kept. A change to a tool already locked is only
 * written with `--update`; without it the diff is printed and the exit is 2.
 */
export async function lockCommand(files: string[], options: LockCommandOptions, io: CliIO): Promise<number> {
  const context = await openCommandContext(options, io);
  const { config } = context;
  const folder = join(config.dir, 'workflows');
  const paths = files.length > 0 ? files.map((file) => resolve(io.cwd, file)) : await listWorkflowFiles(folder);
  if (paths.length === 0) throw new RunnerError('usage', `no workflow files in ${showPath(folder, io.cwd)}`, { hint: 'name workflow files on the command line' });
  const workflows = await loadWorkflowFiles(paths, config, io.env);
  let plan: LockPlan;
  try {
    plan = await planLock({ config, workflows, apps: context.apps(), replaceAll: files.length === 0 });
  } finally {
    await context.close();
  }
  const shown = showPath(plan.file, io.cwd);
  const refused = plan.drifts.length > 0 && !options.update;
  if (plan.changed && !refused) writeLockFile(plan.file, plan.next);
  if (options.json) {
    io.stdout(jsonForOutput({ file: plan.file, written: plan.changed && !refused, created: !plan.existing, tools: plan.tools, apps: plan.apps, drifts: plan.drifts }));
  }
  const counts = `${plan.tools} tool${plan.tools === 1 ? '' : 's'} of ${plan.apps} app${plan.apps === 1 ? '' : 's'}`;
  const say = options.json ? io.stderr : io.stdout;
  if (refused) {
    io.stderr(`error: ${shown} differs from what the apps list now; it was not changed:\n\n${formatDrift(plan.drifts)}\n`);
    io.stderr(`  hint: review the changes; if they are expected, accept them with \`runner lock --update\`\n`);
    return ExitCode.invalid;
  }
  if (plan.drifts.length > 0) say(`accepted:\n\n${formatDrift(plan.drifts)}\n`);
  if (!plan.existing) say(`wrote ${shown}: ${counts}\n`);
  else if (plan.changed) say(`updated ${shown}: ${counts}\n`);
  else say(`${shown} is up to date: ${counts}\n`);
  return ExitCode.succeeded;
}
