import type { RunRecord, StepErrorRecord, StepStatus } from '../artifacts/run-record.js';
import type { RunEvent } from '../scheduler/events.js';
import { formatMs } from '../config/durations.js';
import { maskSecrets } from '../secrets.js';
import { shownMessage } from '../terminal-text.js';
import { answerCommands } from '../scheduler/approval.js';

export interface ProgressOptions {
  /** Where progress goes (stderr). */
  write: (text: string) => void;
  /** A TTY gets a compact live view; anything else one line per state change. */
  tty: boolean;
  secretValues: readonly string[];
  now?: () => number;
  /** While true (a question is on the terminal), the live view does not redraw over it. */
  paused?: () => boolean;
}

/** One symbol per status, the same in progress lines and in report.html. */
export const STATUS_SYMBOLS: Record<StepStatus, string> = {
  pending: '·',
  queued: '◌',
  running: '▶',
  waiting: '⏸',
  succeeded: '✔',
  failed: '✖',
  skipped: '↷',
  denied: '⊘',
  cancelled: '■',
};

/** Turns run events into progress output; returns the event listener. */
export function createProgressReporter(options: ProgressOptions): (event: RunEvent) => void {
  return options.tty ? createLiveView(options) : createLineLog(options);
}

/** How often the line log says how a foreach is doing, and how often it may repeat a call's progress. */
const SUMMARY_EVERY_MS = 5_000;

/**
 * One line per step state change, for logs and CI. A foreach's items are not
 * listed one by one (a 2,000-item step would print 4,000 lines): only the
 * items that fail, and every few seconds a line that counts them. Progress
 * notifications of a call are printed at most once per step every few seconds.
 */
function createLineLog(options: ProgressOptions): (event: RunEvent) => void {
  // Secrets are masked in the values a line shows (messages, reasons), never in ids or paths; a message is cut at a few thousand characters and what would steer a terminal is escaped.
  const mask = (text: string) => shownMessage(maskSecrets(text, options.secretValues));
  const write = (line: string) => options.write(line + '\n');
  const now = options.now ?? Date.now;
  const lastProgress = new Map<string, number>();
  let latest: RunRecord | undefined;
  let summaries: NodeJS.Timeout | undefined;
  const summarize = () => {
    for (const step of latest?.steps ?? []) {
      if (step.items && (step.status === 'running' || step.status === 'queued')) write(`… ${step.id} ${countItems(step.items)}`);
    }
  };
  return (event) => {
    latest = event.run;
    switch (event.type) {
      case 'run-started':
        write(`run ${event.run.id} ${event.run.workflow} started → ${event.run.dir}`);
        summaries = setInterval(summarize, SUMMARY_EVERY_MS);
        summaries.unref();
        break;
      case 'step': {
        if (event.item !== undefined && !isFailure(event.status)) break;
        const label = event.item === undefined ? event.stepId : `${event.stepId}[${event.item}]`;
        const detail = event.error ? `: ${describeError(event.error, mask)}` : event.reason ? ` (${mask(event.reason)})` : '';
        const items = event.item === undefined ? event.run.steps.find((step) => step.id === event.stepId)?.items : undefined;
        const counted = items && !['running', 'queued', 'pending'].includes(event.status) ? ` (${countItems(items)})` : '';
        write(`${STATUS_SYMBOLS[event.status]} ${label} ${event.status}${counted}${detail}`);
        break;
      }
      case 'retry': {
        const label = event.item === undefined ? event.stepId : `${event.stepId}[${event.item}]`;
        write(`↻ ${label} attempt ${event.attempt} failed (${describeError(event.error, mask)}); retrying in ${formatMs(event.delayMs)}`);
        break;
      }
      case 'progress': {
        if (event.item !== undefined) break; // the foreach summary covers items
        const at = now();
        if (at - (lastProgress.get(event.stepId) ?? -Infinity) < SUMMARY_EVERY_MS) break;
        lastProgress.set(event.stepId, at);
        write(`… ${event.stepId} ${describeProgress(event, options.secretValues)}`);
        break;
      }
      case 'run-finished':
        if (summaries) clearInterval(summaries);
        write(summaryLine(event.run, mask));
        break;
    }
  };
}

function isFailure(status: StepStatus): boolean {
  return status === 'failed' || status === 'denied' || status === 'cancelled';
}

/** `120/2000 done: 118 succeeded, 2 failed; 32 running`. */
function countItems(items: readonly { status: StepStatus }[]): string {
  const counts = new Map<StepStatus, number>();
  for (const item of items) counts.set(item.status, (counts.get(item.status) ?? 0) + 1);
  const done = items.length - (counts.get('pending') ?? 0) - (counts.get('queued') ?? 0) - (counts.get('running') ?? 0);
  const finished = (['succeeded', 'failed', 'denied', 'cancelled', 'skipped', 'waiting'] as const).filter((status) => counts.get(status)).map((status) => `${counts.get(status)} ${status}`);
  const busy = (['running', 'queued'] as const).filter((status) => counts.get(status)).map((status) => `${counts.get(status)} ${status}`);
  return `${done}/${items.length} items done${finished.length ? `: ${finished.join(', ')}` : ''}${busy.length ? `; ${busy.join(', ')}` : ''}`;
}

/** `3/10 (30%) rendering page 3`. */
function describeProgress(event: { progress: number; total?: number; message?: string }, secretValues: readonly string[]): string {
  const share = event.total ? `${event.progress}/${event.total} (${Math.round((100 * event.progress) / event.total)}%)` : `${event.progress}`;
  return event.message ? `${share} ${shownMessage(maskSecrets(event.message, secretValues), '')}` : share;
}

/** A compact view redrawn in place: one line per step, then the summary. */
function createLiveView(options: ProgressOptions): (event: RunEvent) => void {
  const mask = (text: string) => shownMessage(maskSecrets(text, options.secretValues));
  let drawnLines = 0;
  let timer: NodeJS.Timeout | undefined;
  let latest: RunRecord | undefined;
  const now = options.now ?? Date.now;
  let wasPaused = false;
  const progress = new Map<string, { progress: number; total?: number; message?: string }>();
  const draw = (final: boolean) => {
    if (!latest) return;
    if (options.paused?.()) {
      wasPaused = true;
      return;
    }
    if (wasPaused) {
      // Whatever was drawn before is above the question now: start a fresh block below it.
      drawnLines = 0;
      wasPaused = false;
    }
    const lines = latest.steps.map((step) => {
      const items = step.items ? ` ${step.items.filter((item) => item.status === 'succeeded').length}/${step.items.length}` : '';
      const took = step.startedAt && step.endedAt ? ` ${formatMs(Date.parse(step.endedAt) - Date.parse(step.startedAt))}` : step.startedAt ? ` ${formatMs(now() - Date.parse(step.startedAt))}` : '';
      const error = step.error ? `  ${describeError(step.error, mask)}` : '';
      const reported = step.status === 'running' && !step.items ? progress.get(step.id) : undefined;
      const note = reported ? `  ${describeProgress(reported, options.secretValues)}` : '';
      return truncate(`${STATUS_SYMBOLS[step.status]} ${step.id.padEnd(16)} ${step.status.padEnd(9)}${items}${took}${note}${error}`);
    });
    if (final) lines.push(summaryLine(latest, mask));
    const clear = drawnLines > 0 ? `\x1b[${drawnLines}F\x1b[J` : '';
    options.write(clear + lines.join('\n') + '\n');
    drawnLines = lines.length;
  };
  return (event) => {
    latest = event.run;
    if (event.type === 'progress' && event.item === undefined) progress.set(event.stepId, event);
    if (event.type === 'run-started') {
      options.write(`run ${event.run.id} ${event.run.workflow} → ${event.run.dir}\n`);
      draw(false);
      return;
    }
    if (event.type === 'run-finished') {
      if (timer) clearTimeout(timer);
      timer = undefined;
      draw(true);
      return;
    }
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      draw(false);
    }, 80);
    timer.unref();
  };
}

/** `run 2026… succeeded in 1.2s: 3 succeeded, 1 skipped`. */
export function summaryLine(run: RunRecord, mask: (text: string) => string = (text) => text): string {
  const counts = new Map<string, number>();
  for (const step of run.steps) counts.set(step.status, (counts.get(step.status) ?? 0) + 1);
  const took = run.endedAt ? ` in ${formatMs(run.durationMs ?? Date.parse(run.endedAt) - Date.parse(run.startedAt))}` : '';
  const parts = [...counts].map(([status, count]) => `${count} ${status}`).join(', ');
  const error = run.error?.message ? ` (${mask(run.error.message)})` : '';
  const files = run.steps.reduce((sum, step) => sum + step.files.length, 0);
  const where = run.endedAt ? `; ${files === 0 ? 'no files' : files === 1 ? '1 file' : `${files} files`} saved, outputs in ${run.dir}` : '';
  return `run ${run.id} ${run.status}${took}: ${parts}${error}${where}${approvalHint(run)}`;
}

/** For a waiting run: which steps wait, until when, and the commands that answer them. */
function approvalHint(run: RunRecord): string {
  if (run.status !== 'waiting') return '';
  const waiting = run.steps.filter((step) => step.status === 'waiting');
  const each = waiting.map((step) => `${step.id} (${answerCommands(run.id, step.id)}${step.approval ? `, expires ${step.approval.expiresAt}` : ''})`);
  return `; waiting for approval: ${each.join('; ')}; then \`runner resume ${run.id}\` continues it (serve continues it by itself)`;
}

function describeError(error: StepErrorRecord, mask: (text: string) => string): string {
  const outcome = error.outcome === 'unknown' ? ', outcome unknown' : '';
  return `[${error.kind}${outcome}] ${mask(error.message)}`;
}

function truncate(line: string): string {
  const width = process.stderr.columns || 120;
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}
