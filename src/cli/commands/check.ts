import { resolve } from 'node:path';
import { auditWorkflows, type CheckedStep, type CheckReport } from '../../check/audit.js';
import type { AppSecretFlow, SecretFlows } from '../../check/secret-flows.js';
import { showPath } from '../../config/load.js';
import { formatDrift } from '../../lock/index.js';
import { ExitCode, formatLocation } from '../../errors.js';
import { maskSecretsDeep } from '../../secrets.js';
import { loadWorkflowFiles } from '../../triggers/discover.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { openCommandContext } from '../context.js';
import { jsonForOutput, safeForTerminal } from '../../terminal-text.js';

/**
 * `runner check WORKFLOW... [--json]`: what each step would be allowed to do,
 * where each secret can go, and what changed since runner.lock, before
 * anything runs. Exit 0 clean, 1 when a step would be refused or could not be
 * audited or a tool changed since the lock, 2 for a broken config or workflow
 * (nothing is connected then).
 */
export async function checkCommand(files: string[], options: GlobalOptions & { json?: boolean }, io: CliIO): Promise<number> {
  const context = await openCommandContext(options, io);
  const { config } = context;
  const workflows = await loadWorkflowFiles(files.map((file) => resolve(io.cwd, file)), config, io.env);
  let report: CheckReport;
  try {
    report = await auditWorkflows(config, workflows, context.apps());
  } finally {
    await context.close();
  }
  // Names and places only, but an app's error message may quote a header or URL.
  report = maskSecretsDeep(report, config.secretValues);
  if (options.json) io.stdout(jsonForOutput(report));
  // An app's error message and its name are the app's: what would steer a terminal is escaped.
  else io.stdout(safeForTerminal(formatReport(report, io.cwd)));
  return report.ok ? ExitCode.succeeded : ExitCode.stepFailed;
}

function formatReport(report: CheckReport, cwd: string): string {
  const lines: string[] = [];
  for (const workflow of report.workflows) {
    lines.push(`${workflow.name} (${showPath(workflow.file, cwd)})${workflow.triggered ? ', runs on a trigger: an ask has no terminal' : ''}`);
    const width = Math.max(...workflow.steps.map((step) => step.id.length), 4);
    const usesWidth = Math.max(...workflow.steps.map((step) => step.uses.length), 4);
    for (const step of workflow.steps) lines.push(`  ${step.id.padEnd(width)}  ${step.uses.padEnd(usesWidth)}  ${describeStep(step)}`);
    for (const step of workflow.steps) for (const problem of step.problems) lines.push(`  ${step.id}: ${problem}`);
    lines.push('');
  }
  lines.push('secrets');
  if (report.secrets.length === 0) lines.push('  none: the config lists no `secrets:` and no `auth:` credentials');
  for (const secret of report.secrets) lines.push(...describeSecret(secret, cwd));
  lines.push('');
  lines.push(`destructive steps: ${report.destructive.join(', ') || 'none'}`);
  lines.push(`open-world steps: ${report.openWorld.join(', ') || 'none'}`);
  lines.push(...describeLock(report.lock, cwd));
  if (report.denied.length > 0) lines.push(`would be refused: ${report.denied.join(', ')}`);
  if (report.problems.length > 0) lines.push(`could not be checked: ${report.problems.join(', ')}`);
  lines.push(report.ok ? 'ok: every step would be allowed or asked, and nothing changed since the lock' : 'not ok: see above (exit 1)');
  return lines.join('\n') + '\n';
}

function describeLock(lock: CheckReport['lock'], cwd: string): string[] {
  const file = showPath(lock.file, cwd);
  if (!lock.present) return [`lock: no ${file}, so nothing is pinned (\`runner lock\` writes it)`];
  if (lock.drifts.length === 0) return [`lock: the tools match ${file}`];
  const stopping = lock.drifts.some((drift) => drift.stops);
  return [
    `lock: the tools changed since ${file} was written${stopping ? '; a run would stop before its first call' : ''}:`,
    ...formatDrift(lock.drifts).trimEnd().split('\n').map((line) => `  ${line}`),
    stopping ? '  review the changes; `runner lock --update` accepts them' : '',
  ].filter(Boolean);
}

function describeStep(step: CheckedStep): string {
  if (!step.policy || !step.hints) return 'unknown (see below)';
  const hints = step.hints;
  const kind = [hints.readOnly ? 'read-only' : hints.destructive ? 'destructive' : 'writes', hints.openWorld && step.app !== 'runner' ? 'open-world' : '']
    .filter(Boolean)
    .join(', ');
  const headless = step.headless ? `; without a terminal: ${step.headless}` : '';
  return `${step.policy.action.padEnd(5)}  ${kind} (${step.policy.reason}${headless})${step.denied ? '  ← refused' : ''}`;
}

function describeSecret(secret: SecretFlows, cwd: string): string[] {
  const lines = [`  ${secret.name}`];
  lines.push(`    apps: ${secret.apps.length === 0 ? 'none from the config' : secret.apps.map(describeAppFlow).join('; ')}`);
  if (secret.steps.length === 0) lines.push('    steps: none');
  for (const step of secret.steps) {
    const at = formatLocation({ ...step.location, file: showPath(step.location.file, cwd) });
    lines.push(`    step ${step.workflow}/${step.step} (${step.uses}) through ${step.through.join(', ')}, at ${at}`);
  }
  return lines;
}

function describeAppFlow(flow: AppSecretFlow): string {
  switch (flow.via) {
    case 'env':
      return `${flow.app} (env ${flow.key})`;
    case 'args':
      return `${flow.app} (args[${flow.key}], visible in the process list)`;
    case 'headers':
      return `${flow.app} (header ${flow.key})`;
    case 'url':
      return `${flow.app} (in its url)`;
    case 'auth':
      return `${flow.app}'s authorization server (auth.${flow.key})`;
  }
}
