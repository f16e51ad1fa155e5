import type { ItemRecord, StepRecord, StepStatus } from '../../artifacts/run-record.js';
import { isoMs } from '../../clock.js';
import { formatMs } from '../../config/durations.js';
import { STATUS_SYMBOLS } from '../progress.js';
import { escapeHtml, truncateText } from './escape-html.js';

/** The same symbols as the progress lines, so a status reads the same everywhere; the word is always shown beside it. */
const ICONS: Record<string, string> = STATUS_SYMBOLS;

/** A status the stylesheet knows, else `unknown` (a status is never put into a class name unchecked). */
export function statusKey(status: string): string {
  return Object.hasOwn(ICONS, status) ? status : 'unknown';
}

/** The status as icon and word, e.g. `✖ failed`. */
export function statusText(status: string): string {
  return `${ICONS[statusKey(status)] ?? '?'} ${status}`;
}

/** A coloured badge that also says the status in words. */
export function statusBadge(status: string): string {
  return `<span class="badge st-${statusKey(status)}">${escapeHtml(statusText(status))}</span>`;
}

/** How a foreach step's items ended: `12/14 succeeded, 2 failed`. */
export function countItems(items: readonly ItemRecord[]): string {
  const counts = new Map<StepStatus, number>();
  for (const item of items) counts.set(item.status, (counts.get(item.status) ?? 0) + 1);
  const succeeded = counts.get('succeeded') ?? 0;
  counts.delete('succeeded');
  const rest = [...counts].map(([status, count]) => `${count} ${status}`);
  return [`${succeeded}/${items.length} succeeded`, ...rest].join(', ');
}

/** Milliseconds between two ISO times, or undefined when either is missing. */
export function spanMs(start: string | null | undefined, end: string | null | undefined): number | undefined {
  if (!start || !end) return undefined;
  const ms = isoMs(end) - isoMs(start);
  return Number.isFinite(ms) ? Math.max(0, ms) : undefined;
}

/** A duration for people, `-` when unknown. */
export function formatSpan(ms: number | undefined): string {
  return ms === undefined ? '-' : formatMs(Math.round(ms));
}

/** The step's duration. */
export function stepMs(step: StepRecord): number | undefined {
  return spanMs(step.startedAt, step.endedAt);
}

/** Escaped text of at most `max` characters. */
export function shortText(text: string, max: number): string {
  return escapeHtml(truncateText(text, max));
}

/** `3 succeeded, 1 failed`. */
export function countStatuses(statuses: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts].map(([status, count]) => `${count} ${status}`).join(', ');
}
