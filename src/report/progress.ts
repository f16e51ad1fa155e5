import type { RunRecord, StepErrorRecord, StepStatus } from '../artifacts/run-record.js';
import type { RunEvent } from '../scheduler/events.js';
import { formatMs } from '../config/durations.js';
import { maskSecrets } from '../secrets.js';

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

const symbols: Record<StepStatus, string> = {
  pending: '·',
  running: '▶',
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

/** One line per step state change, for logs and CI. */
function createLineLog(options: ProgressOptions): (event: RunEvent) => void {
  // Secrets are masked in the values a line shows (messages, reasons), never in ids or paths.
  const mask = (text: string) => maskSecrets(text, options.secretValues);
  const write = (line: string) => options.write(line + '\n');
  return (event) => {
    switch (event.type) {
      case 'run-started':
        write(`run ${event.run.id} ${event.run.workflow} started → ${event.run.dir}`);
        break;
      case 'step': {
        const label = event.item === undefined ? event.stepId : `${event.stepId}[${event.item}]`;
        const detail = event.error ? `: ${describeError(event.error, mask)}` : event.reason ? ` (${mask(event.reason)})` : '';
        write(`${symbols[event.status]} ${label} ${event.status}${detail}`);
        break;
      }
      case 'retry': {
        const label = event.item === undefined ? event.stepId : `${event.stepId}[${event.item}]`;
        write(`↻ ${label} attempt ${event.attempt} failed (${describeError(event.error, mask)}); retrying in ${formatMs(event.delayMs)}`);
        break;
      }
      case 'run-finished':
        write(summaryLine(event.run, mask));
        break;
    }
  };
}

/** A compact view redrawn in place: one line per step, then the summary. */
function createLiveView(options: ProgressOptions): (event: RunEvent) => void {
  const mask = (text: string) => maskSecrets(text, options.secretValues);
  let drawnLines = 0;
  let timer: NodeJS.Timeout | undefined;
  let latest: RunRecord | undefined;
  const now = options.now ?? Date.now;
  let wasPaused = false;
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
      return truncate(`${symbols[step.status]} ${step.id.padEnd(16)} ${step.status.padEnd(9)}${items}${took}${error}`);
    });
    if (final) lines.push(summaryLine(latest, mask));
    const clear = drawnLines > 0 ? `\x1b[${drawnLines}F\x1b[J` : '';
    options.write(clear + lines.join('\n') + '\n');
    drawnLines = lines.length;
  };
  return (event) => {
    latest = event.run;
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
  return `run ${run.id} ${run.status}${took}: ${parts}${error}`;
}

function describeError(error: StepErrorRecord, mask: (text: string) => string): string {
  const outcome = error.outcome === 'unknown' ? ', outcome unknown' : '';
  return `[${error.kind}${outcome}] ${mask(error.message)}`;
}

function truncate(line: string): string {
  const width = process.stderr.columns || 120;
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}
