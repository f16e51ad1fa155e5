import type { AttemptRecord, RunRecord, StepRecord } from '../../artifacts/run-record.js';
import { isoMs } from '../../clock.js';
import { escapeHtml } from './escape-html.js';
import { formatSpan, shortText, spanMs, statusKey, statusText, stepMs } from './report-format.js';

/** A foreach step shows this many items in the timeline; its details list them all. */
const TIMELINE_ITEMS = 50;

/**
 * The timeline: a row per step (and per foreach item), each attempt its own
 * bar placed by time, with its duration and error in its tooltip and the
 * row's status and duration in words.
 */
export function* renderTimeline(record: RunRecord, anchors: ReadonlyMap<string, string>): Generator<string, void> {
  const startMs = isoMs(record.startedAt);
  // A loop, not Math.max(...ends): 10,000 items' attempts are too many arguments.
  let endMs = startMs + 1;
  const reach = (iso: string | null | undefined) => {
    const ms = isoMs(iso ?? '');
    if (ms > endMs) endMs = ms;
  };
  reach(record.endedAt);
  for (const step of record.steps) {
    reach(step.endedAt);
    for (const attempt of allAttempts(step)) reach(attempt.endedAt);
  }
  const scale = (iso: string | null) => {
    const ms = isoMs(iso ?? '');
    return Number.isFinite(ms) ? Math.min(100, Math.max(0, ((ms - startMs) / (endMs - startMs)) * 100)) : undefined;
  };
  const bar = (from: string | null, to: string | null, status: string, label: string, extra = '') => {
    const left = scale(from);
    if (left === undefined) return '';
    const right = scale(to) ?? left;
    const width = Math.max(0.4, right - left);
    return `<span class="tl-bar st-${statusKey(status)}${extra}" style="left:${left.toFixed(2)}%;width:${width.toFixed(2)}%" title="${escapeHtml(label)}"></span>`;
  };
  const attemptBars = (history: readonly AttemptRecord[], finalStatus: string) =>
    history
      .map((attempt, i) => {
        const status = attempt.error ? (attempt.error.kind === 'cancelled' ? 'cancelled' : 'failed') : i === history.length - 1 ? finalStatus : 'succeeded';
        const took = formatSpan(spanMs(attempt.startedAt, attempt.endedAt));
        const label = `attempt ${attempt.attempt}: ${took}${attempt.error ? `, [${attempt.error.kind}] ${attempt.error.message}` : ''}`;
        return bar(attempt.startedAt, attempt.endedAt, status, label, ' tl-attempt');
      })
      .join('');

  yield `<div class="tl-axis" aria-hidden="true"><span>0</span><span>${escapeHtml(formatSpan(endMs - startMs))}</span></div><ol class="timeline">`;
  for (const step of record.steps) {
    const anchor = anchors.get(step.id) ?? '';
    const took = formatSpan(stepMs(step));
    const tries = step.history.length > 0 ? `, ${step.history.length} attempt${step.history.length === 1 ? '' : 's'}` : '';
    const span = bar(step.startedAt, step.endedAt ?? record.endedAt, step.status, `${step.id}: ${step.status}, ${took}`, ' tl-span');
    yield (
      `<li class="tl-row"><span class="tl-label"><a href="#${anchor}">${shortText(step.id, 40)}</a> <span class="tl-meta">${escapeHtml(statusText(step.status))} · ${escapeHtml(took)}${escapeHtml(tries)}</span></span>` +
      `<span class="tl-track">${span}${step.items ? '' : attemptBars(step.history, step.status)}</span></li>`
    );
    for (const item of (step.items ?? []).slice(0, TIMELINE_ITEMS)) {
      const first = item.history[0]?.startedAt ?? null;
      const last = item.history[item.history.length - 1]?.endedAt ?? null;
      const itemTook = formatSpan(spanMs(first, last));
      yield (
        `<li class="tl-row tl-item"><span class="tl-label">item ${item.index} <span class="tl-meta">${escapeHtml(statusText(item.status))} · ${escapeHtml(itemTook)}${item.history.length > 1 ? `, ${item.history.length} attempts` : ''}</span></span>` +
        `<span class="tl-track">${attemptBars(item.history, item.status)}</span></li>`
      );
    }
    if (step.items && step.items.length > TIMELINE_ITEMS) {
      yield `<li class="tl-row tl-item tl-more"><span class="tl-label"><a href="#${anchor}">${step.items.length - TIMELINE_ITEMS} more items</a></span><span class="tl-track"></span></li>`;
    }
  }
  yield '</ol>';
}

function allAttempts(step: StepRecord): AttemptRecord[] {
  return step.items ? step.items.flatMap((item) => item.history) : step.history;
}
