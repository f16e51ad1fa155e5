import type { RunRecord, RunStatus, StepRecord } from '../../artifacts/run-record.js';
import { loadHistorySettings } from '../../config/history-settings.js';
import { DURATION_EXPECTED, parseDuration } from '../../config/durations.js';
import { ExitCode, RunnerError } from '../../errors.js';
import { summaryLine } from '../../report/progress.js';
import { formatMs } from '../../config/durations.js';
import { displayRecord, findRun, withRunStore } from '../../store/run-history.js';
import { isOwnerLive } from '../../store/run-owner.js';
import { deleteRuns, selectRunsToPrune } from '../../store/prune.js';
import type { RunFilter } from '../../store/run-store.js';
import { answerCommands } from '../../scheduler/approval.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { jsonForOutput, safeForTerminal } from '../../terminal-text.js';

const STATUSES: RunStatus[] = ['running', 'waiting', 'succeeded', 'failed', 'cancelled'];

export interface RunsOptions extends GlobalOptions {
  json?: boolean;
  workflow?: string;
  status?: string;
  since?: string;
  limit?: string;
}

/** `runner runs`: the run history from the store, newest first. */
export async function runsCommand(options: RunsOptions, io: CliIO): Promise<number> {
  const config = await loadHistorySettings({ configPath: options.config, cwd: io.cwd, env: io.env });
  const filter = parseFilter(options, Date.now());
  const runs = await withRunStore(config, (store) => store.listRuns(filter));
  if (options.json) {
    io.stdout(jsonForOutput(runs));
    return ExitCode.succeeded;
  }
  if (runs.length === 0) io.stderr(`no runs${describeFilter(filter)} under ${config.artifacts}\n`);
  for (const run of runs) {
    const took = run.endedAt ? formatMs(run.durationMs ?? Date.parse(run.endedAt) - Date.parse(run.startedAt)) : '';
    io.stdout(`${run.id}  ${run.workflow.padEnd(20)} ${run.status.padEnd(9)} ${run.trigger.type.padEnd(8)} ${run.startedAt}  ${took}\n`);
  }
  return ExitCode.succeeded;
}

/** `runner runs show ID|latest`: one run, step by step. */
export async function showRunCommand(id: string, options: GlobalOptions & { json?: boolean }, io: CliIO): Promise<number> {
  const config = await loadHistorySettings({ configPath: options.config, cwd: io.cwd, env: io.env });
  const { run, interrupted } = await withRunStore(config, (store) => {
    const stored = findRun(store, config.artifacts, id);
    const owner = stored.run.status === 'running' ? store.unfinishedRuns([stored.run.workflow]).find((candidate) => candidate.id === stored.id)?.owner : undefined;
    return { run: displayRecord(stored), interrupted: stored.run.status === 'running' && !(owner && isOwnerLive(owner, Date.now())) };
  });
  if (options.json) {
    io.stdout(jsonForOutput(run));
    return ExitCode.succeeded;
  }
  // Errors and texts in a record are the apps' words: what would steer a terminal is escaped.
  io.stdout(`${summaryLine(run, safeForTerminal)}\n`);
  if (interrupted) io.stdout(`  interrupted: the process that ran it is gone; continue it with \`runner resume ${run.id}\`\n`);
  io.stdout(`  workflow: ${run.workflow}${run.workflowFile ? ` (${run.workflowFile})` : ''}\n  dir: ${run.dir}\n  trigger: ${safeForTerminal(JSON.stringify(run.trigger))}\n`);
  for (const resume of run.resumes ?? []) io.stdout(`  resumed ${resume.at}: ran ${resume.steps.join(', ') || 'nothing'}\n`);
  for (const step of run.steps) io.stdout(safeForTerminal(describeStep(step, run)));
  return ExitCode.succeeded;
}

export interface PruneCommandOptions extends GlobalOptions {
  olderThan?: string;
  keep?: string;
  workflow?: string;
  dryRun?: boolean;
  json?: boolean;
}

/** `runner runs prune`: deletes old runs (folders and store rows), never one that is still running. */
export async function pruneCommand(options: PruneCommandOptions, io: CliIO): Promise<number> {
  const config = await loadHistorySettings({ configPath: options.config, cwd: io.cwd, env: io.env });
  const given = options.olderThan !== undefined || options.keep !== undefined;
  const policy = given
    ? {
        ...(options.olderThan !== undefined && { maxAgeMs: parseDurationOption('--older-than', options.olderThan) }),
        ...(options.keep !== undefined && { maxRuns: parseCountOption('--keep', options.keep, 0) }),
      }
    : config.retention;
  if (policy.maxAgeMs === undefined && policy.maxRuns === undefined) {
    throw new RunnerError('usage', 'nothing to prune by: give `--older-than DURATION` or `--keep N`', {
      hint: 'or set `retention: { max-age: 30d, max-runs: 500 }` in runner.config.yaml',
    });
  }
  const result = await withRunStore(config, async (store) => {
    const chosen = selectRunsToPrune(store, { ...policy, workflow: options.workflow }, Date.now());
    return options.dryRun ? { deleted: chosen, failed: [] } : deleteRuns(store, chosen);
  });
  if (options.json) {
    io.stdout(jsonForOutput({ dryRun: Boolean(options.dryRun), runs: result.deleted, failed: result.failed }));
  } else {
    for (const run of result.deleted) io.stdout(`${options.dryRun ? 'would delete' : 'deleted'} ${run.id}  ${run.workflow}  ${run.status}  ${run.startedAt}\n`);
    for (const { run, error } of result.failed) io.stderr(`could not delete ${run.id} (${run.dir}): ${error}\n`);
    io.stderr(`${options.dryRun ? 'would prune' : 'pruned'} ${result.deleted.length} run${result.deleted.length === 1 ? '' : 's'}\n`);
  }
  return result.failed.length > 0 ? ExitCode.stepFailed : ExitCode.succeeded;
}

function describeStep(step: StepRecord, run: RunRecord): string {
  const took = step.startedAt && step.endedAt ? formatMs(Date.parse(step.endedAt) - Date.parse(step.startedAt)) : '-';
  const tries = step.items
    ? `${step.items.length} item${step.items.length === 1 ? '' : 's'}: ${countBy(step.items.map((item) => item.status))}`
    : `attempts ${step.attempts}${step.history.length > step.attempts ? ` (${step.history.length} over all resumes)` : ''}`;
  const error = step.error ? `\n      [${step.error.kind}${step.error.outcome === 'unknown' ? ', outcome unknown' : ''}] ${step.error.message}` : '';
  const files = step.files.map((file) => `\n      ${file.startsWith(run.dir + '/') ? file.slice(run.dir.length + 1) : file}`).join('');
  return `  ${step.id.padEnd(20)} ${step.status.padEnd(9)} ${took.padStart(7)}  ${tries}${describeApprovalOf(step, run)}${error}${files}\n`;
}

/** A step's approval: who answered and when, or until when it waits and how to answer. */
function describeApprovalOf(step: StepRecord, run: RunRecord): string {
  const approval = step.approval;
  if (!approval) return '';
  if (approval.decision === 'expired') return `\n      approval expired unanswered at ${approval.expiresAt} (counts as denied)`;
  if (approval.decision) return `\n      ${approval.decision} by ${approval.by ?? 'unknown'} at ${approval.at ?? '-'}${approval.via ? ` (${approval.via})` : ''}`;
  return `\n      waiting for approval until ${approval.expiresAt}: ${answerCommands(run.id, step.id)}`;
}

function countBy(values: string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].map(([value, count]) => `${count} ${value}`).join(', ');
}

function parseFilter(options: RunsOptions, nowMs: number): RunFilter {
  const filter: RunFilter = {};
  if (options.workflow !== undefined) filter.workflow = options.workflow;
  if (options.status !== undefined) {
    if (!STATUSES.includes(options.status as RunStatus)) {
      throw new RunnerError('usage', `\`--status\`: expected one of ${STATUSES.join(', ')}, got \`${options.status}\``);
    }
    filter.status = options.status as RunStatus;
  }
  if (options.since !== undefined) filter.sinceMs = nowMs - parseDurationOption('--since', options.since);
  if (options.limit !== undefined) filter.limit = parseCountOption('--limit', options.limit, 1);
  return filter;
}

function describeFilter(filter: RunFilter): string {
  const parts = [filter.workflow && `of ${filter.workflow}`, filter.status && `with status ${filter.status}`, filter.sinceMs !== undefined && `since ${new Date(filter.sinceMs).toISOString()}`];
  const text = parts.filter(Boolean).join(' ');
  return text ? ` ${text}` : '';
}

function parseDurationOption(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new RunnerError('usage', `\`${flag}\`: expected ${DURATION_EXPECTED} or 7d, got \`${text}\``);
  return ms;
}

function parseCountOption(flag: string, text: string, min: number): number {
  const count = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(count) || count < min) {
    throw new RunnerError('usage', `\`${flag}\`: expected a whole number from ${min} up, got \`${text}\``);
  }
  return count;
}
