import { relative, sep } from 'node:path';
import type { ApprovalRecord, AttemptRecord, ElicitationRecord, ItemRecord, RunRecord, StepErrorRecord, StepRecord } from '../../artifacts/run-record.js';
import { escapeHref, escapeHtml } from './escape-html.js';
import type { ReportData } from './report-data.js';
import { isInside } from './report-data.js';
import { countItems, formatSpan, shortText, spanMs, statusBadge, statusKey, statusText, stepMs } from './report-format.js';
import { renderValue } from './render-value.js';

/** A foreach step's details list this many items; the rest are counted. */
const LISTED_ITEMS = 1_000;

/** One section per step: what it called, how the policy decided, each attempt, its values and files. */
export function* renderSteps(data: ReportData, anchors: ReadonlyMap<string, string>): Generator<string, void> {
  for (const step of data.record.steps) yield renderStep(step, data, anchors);
}

function renderStep(step: StepRecord, data: ReportData, anchors: ReadonlyMap<string, string>): string {
  const anchor = anchors.get(step.id) ?? '';
  const rows: [string, string][] = [
    ['tool', `<code>${escapeHtml(step.uses)}</code>`],
    ['policy', renderPolicy(step)],
    ...(step.approval ? [['approval', renderApproval(step.approval)] as [string, string]] : []),
    ['started', escapeHtml(step.startedAt ?? '-')],
    ['duration', escapeHtml(formatSpan(stepMs(step)))],
    ['attempts', escapeHtml(String(step.attempts))],
  ];
  if (step.needs && step.needs.length > 0) {
    const read = (id: string) => (step.declaredNeeds && !step.declaredNeeds.includes(id) ? ' <span class="muted">(read in an expression)</span>' : '');
    const link = (id: string) => (anchors.has(id) ? `<a href="#${anchors.get(id)}">${shortText(id, 80)}</a>` : shortText(id, 80));
    rows.push(['needs', step.needs.map((id) => link(id) + read(id)).join(', ')]);
  }
  if (step.items) rows.push(['items', escapeHtml(countItems(step.items))]);
  return (
    `<section class="step st-${statusKey(step.status)}" id="${anchor}" aria-labelledby="${anchor}-h">` +
    `<h3 id="${anchor}-h">${statusBadge(step.status)} <span class="step-id">${escapeHtml(step.id)}</span></h3>` +
    renderError(step.error) +
    `<dl class="facts">${rows.map(([name, value]) => `<dt>${name}</dt><dd>${value}</dd>`).join('')}</dl>` +
    renderAttempts(step.history) +
    renderElicitations(step.elicitations) +
    (step.items ? renderItems(step.items) : '') +
    renderValue('arguments', step.args) +
    renderValue('outputs', step.outputs) +
    renderValue('text the tool returned', isEmptyText(step.text) ? undefined : step.text, { collapsed: true }) +
    renderFiles(step.files, data) +
    '</section>'
  );
}

function renderPolicy(step: StepRecord): string {
  if (!step.policy) return '<span class="muted">not decided (the call was not reached)</span>';
  return `<strong>${escapeHtml(step.policy)}</strong>${step.policyReason ? ` <span class="muted">(${escapeHtml(step.policyReason)})</span>` : ''}`;
}

/** Who answered a waiting step's approval, and when; or until when it waits, and how to answer. */
function renderApproval(approval: ApprovalRecord): string {
  const requested = `<span class="muted">asked ${escapeHtml(approval.requestedAt)}</span>`;
  if (!approval.decision) return `<strong>waiting</strong> until ${escapeHtml(approval.expiresAt)} ${requested}`;
  if (approval.decision === 'expired') return `<strong>expired</strong> unanswered at ${escapeHtml(approval.expiresAt)} (counts as denied) ${requested}`;
  const via = approval.via ? ` <span class="muted">(${escapeHtml(approval.via)})</span>` : '';
  return `<strong>${escapeHtml(approval.decision)}</strong> by ${escapeHtml(approval.by ?? 'unknown')} at ${escapeHtml(approval.at ?? '-')}${via} ${requested}`;
}

/** The error, with `outcome: unknown` impossible to miss. */
export function renderError(error: StepErrorRecord | null): string {
  if (!error) return '';
  const unknown =
    error.outcome === 'unknown'
      ? '<p class="unknown"><strong>⚠ outcome: unknown</strong>: the call may or may not have had its effect. It is not run again unless the run is resumed with <code>--rerun-unknown</code>.</p>'
      : '';
  const notSent = error.outcome === 'not-sent' ? ' <span class="muted">(nothing was sent)</span>' : '';
  return `${unknown}<p class="error"><strong>error [${escapeHtml(error.kind)}]</strong>${notSent}: ${escapeHtml(error.message)}</p>`;
}

function renderAttempts(history: readonly AttemptRecord[]): string {
  if (history.length === 0) return '';
  const rows = history.map((attempt) => {
    const result = attempt.error
      ? `[${escapeHtml(attempt.error.kind)}]${attempt.error.outcome === 'unknown' ? ' <strong>outcome unknown</strong>' : ''} ${escapeHtml(attempt.error.message)}`
      : 'ok';
    return `<tr><td>${attempt.attempt}</td><td>${escapeHtml(attempt.startedAt)}</td><td>${escapeHtml(formatSpan(spanMs(attempt.startedAt, attempt.endedAt)))}</td><td>${result}</td></tr>`;
  });
  return `<div class="scroll"><table><caption>attempts</caption><thead><tr><th scope="col">#</th><th scope="col">started</th><th scope="col">took</th><th scope="col">result</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function renderElicitations(elicitations: readonly ElicitationRecord[] | undefined): string {
  if (!elicitations || elicitations.length === 0) return '';
  const rows = elicitations.map(
    (asked) =>
      `<tr><td>${escapeHtml(asked.message)}</td><td>${escapeHtml(asked.action)}</td><td>${escapeHtml(asked.answered.join(', ') || '-')}</td><td>${escapeHtml(asked.source)}</td></tr>`,
  );
  return `<div class="scroll"><table><caption>questions the tool asked (elicitation)</caption><thead><tr><th scope="col">message</th><th scope="col">answer</th><th scope="col">fields answered</th><th scope="col">answered from</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function renderItems(items: readonly ItemRecord[]): string {
  const rows = items.slice(0, LISTED_ITEMS).map((item) => {
    const first = item.history[0]?.startedAt;
    const last = item.history[item.history.length - 1]?.endedAt;
    const error = item.error
      ? `${item.error.outcome === 'unknown' ? '<strong>⚠ outcome unknown</strong> ' : ''}[${escapeHtml(item.error.kind)}] ${escapeHtml(item.error.message)}`
      : '';
    return `<tr class="st-${statusKey(item.status)}"><td>${item.index}</td><td>${escapeHtml(statusText(item.status))}</td><td>${item.attempts}</td><td>${escapeHtml(formatSpan(spanMs(first, last)))}</td><td>${error}</td></tr>`;
  });
  const more = items.length > LISTED_ITEMS ? `<p class="muted">${items.length - LISTED_ITEMS} more items are in run.json.</p>` : '';
  const open = items.some((item) => item.status !== 'succeeded') && items.length <= 50 ? ' open' : '';
  return (
    `<details class="items"${open}><summary>foreach items: ${escapeHtml(countItems(items))}</summary>` +
    `<div class="scroll"><table><thead><tr><th scope="col">item</th><th scope="col">status</th><th scope="col">attempts</th><th scope="col">took</th><th scope="col">error</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>${more}</details>`
  );
}

/** The step's saved files: a thumbnail for each image, a link for every file inside the run folder. */
function renderFiles(files: readonly string[], data: ReportData): string {
  if (files.length === 0) return '';
  const entries = files.map((file) => {
    if (!isInside(data.record.dir, file)) return `<li>${escapeHtml(file)}</li>`;
    const path = relativePath(data.record, file);
    const thumbnail = data.thumbnails.get(file);
    const image = thumbnail
      ? `<a href="${escapeHref(path)}" class="thumb"><img src="${escapeHtml(thumbnail.src)}" width="${thumbnail.width}" height="${thumbnail.height}" alt="${escapeHtml(`preview of ${path}`)}"></a>`
      : '';
    return `<li>${image}<a href="${escapeHref(path)}">${escapeHtml(path)}</a></li>`;
  });
  return `<h4>saved files</h4><ul class="files">${entries.join('')}</ul>`;
}

/** A file's path from the run folder, with `/` separators (a link target). */
export function relativePath(record: RunRecord, file: string): string {
  return relative(record.dir, file).split(sep).join('/');
}

function isEmptyText(text: string | string[]): boolean {
  return Array.isArray(text) ? text.every((entry) => entry === '') : text === '';
}
