import type { RunRecord } from '../../artifacts/run-record.js';
import { escapeHref, escapeHtml } from './escape-html.js';
import type { ReportData } from './report-data.js';
import { countStatuses, formatSpan, spanMs, statusBadge } from './report-format.js';
import { REPORT_CSS } from './report-style.js';
import { renderGraph } from './render-graph.js';
import { renderSteps } from './render-steps.js';
import { renderTimeline } from './render-timeline.js';
import { renderValue } from './render-value.js';

// Belt and braces: even if some text escaped escaping, the page may run no
// script and load nothing but its own data: images.
const CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

const LEGEND = ['succeeded', 'failed', 'denied', 'skipped', 'cancelled', 'running', 'waiting', 'queued', 'pending'];

/**
 * report.html of a run: one self-contained page (no script, no request) with
 * the step graph, a timeline, every step's details, the apps, inputs,
 * trigger, logs and saved files, every text escaped.
 */
export function renderReport(data: ReportData): string {
  return [...renderReportChunks(data)].join('');
}

/**
 * The page of renderReport in order, as small strings made as they are asked
 * for (a graph node, a timeline row, a step's section): what writeRunReport
 * streams into the file, so that each piece is garbage as soon as it is
 * written and none outlives V8's young generation.
 */
export function* renderReportChunks(data: ReportData): Generator<string, void> {
  const { record } = data;
  // Anchors by position: a step id is never put into an id attribute or a URL fragment.
  const anchors = new Map(record.steps.map((step, index) => [step.id, `s-${index}`]));
  const title = `${record.workflow} ${record.id}: ${record.status}`;
  yield [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    `<title>${escapeHtml(title)}</title><style>${REPORT_CSS}</style></head><body>`,
    '<a class="skip" href="#steps">skip to the steps</a><main>',
    renderSummary(record, data.generatedAt),
    '<nav aria-label="sections"><ul><li><a href="#graph">graph</a></li><li><a href="#timeline">timeline</a></li><li><a href="#steps">steps</a></li><li><a href="#apps">apps</a></li><li><a href="#inputs">inputs and trigger</a></li><li><a href="#files">files and logs</a></li></ul></nav>',
    '<section id="graph" aria-labelledby="graph-h"><h2 id="graph-h">Step graph</h2>',
    `<ul class="legend" aria-label="status colours">${LEGEND.map((status) => `<li>${statusBadge(status)}</li>`).join('')}</ul>`,
    '<p class="muted">An arrow points from a step to the steps that need it: solid for <code>needs:</code>, dashed for a step read in an expression (<code>steps.&lt;id&gt;</code>). Each box links to the step\'s details.</p>',
    record.steps.some((step) => step.needs !== undefined) ? '' : '<p class="muted">This run was recorded before runner kept each step\'s needs: the graph shows no arrows.</p>',
    '<div class="graph-box">',
  ].join('');
  yield* renderGraph(record.steps, anchors);
  yield '</div></section><section id="timeline" aria-labelledby="timeline-h"><h2 id="timeline-h">Timeline</h2>';
  yield '<p class="muted">Each bar is one attempt, placed by when it ran; a faint bar is the whole step, waiting included. Hover a bar for its duration and error.</p>';
  yield* renderTimeline(record, anchors);
  yield '</section><section id="steps" aria-labelledby="steps-h"><h2 id="steps-h">Steps</h2>';
  yield* renderSteps(data, anchors);
  yield '</section>';
  yield renderApps(record, data);
  yield renderInputs(record);
  yield renderFilesAndLogs(record, data);
  yield '</main></body></html>\n';
}

function renderSummary(record: RunRecord, generatedAt: string): string {
  const took = record.durationMs !== undefined ? record.durationMs : spanMs(record.startedAt, record.endedAt);
  const facts: [string, string][] = [
    ['status', statusBadge(record.status)],
    ['steps', escapeHtml(countStatuses(record.steps.map((step) => step.status)) || 'none')],
    ['started', escapeHtml(record.startedAt)],
    ['ended', escapeHtml(record.endedAt ?? 'not yet')],
    ['duration', escapeHtml(formatSpan(took))],
    ['trigger', escapeHtml(record.trigger.type)],
    ['workflow file', record.workflowFile ? `<code>${escapeHtml(record.workflowFile)}</code>` : '<span class="muted">none (a `runner call`)</span>'],
    ['run folder', `<code>${escapeHtml(record.dir)}</code>`],
  ];
  const resumes = (record.resumes ?? []).map((resume) => `<li>resumed ${escapeHtml(resume.at)}: ran ${escapeHtml(resume.steps.join(', ') || 'nothing')}</li>`);
  return (
    `<header class="summary"><p class="muted">runner report · written ${escapeHtml(generatedAt)}</p>` +
    `<h1>${escapeHtml(record.workflow)} <span class="muted">run ${escapeHtml(record.id)}</span></h1>` +
    (record.error ? `<p class="error"><strong>run error</strong>: ${escapeHtml(record.error.message)}</p>` : '') +
    `<dl class="facts">${facts.map(([name, value]) => `<dt>${name}</dt><dd>${value}</dd>`).join('')}</dl>` +
    (resumes.length > 0 ? `<ul>${resumes.join('')}</ul>` : '') +
    '</header>'
  );
}

function renderApps(record: RunRecord, data: ReportData): string {
  const logs = new Map(data.logs.map((log) => [log.app, log.path]));
  const rows = Object.entries(record.apps).map(([name, app]) => {
    const log = logs.get(name);
    return (
      `<tr><th scope="row">${escapeHtml(name)}</th><td>${escapeHtml(app.protocolVersion ?? '?')}</td>` +
      `<td>${escapeHtml(app.server ? `${app.server.name ?? '?'} ${app.server.version ?? ''}`.trim() : '?')}</td>` +
      `<td>${log ? `<a href="${escapeHref(log)}">${escapeHtml(log)}</a>` : '<span class="muted">none</span>'}</td></tr>`
    );
  });
  const table = rows.length
    ? `<div class="scroll"><table><thead><tr><th scope="col">app</th><th scope="col">protocol version</th><th scope="col">server</th><th scope="col">log (stderr)</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`
    : '<p class="muted">No app was reached in this run.</p>';
  return `<section id="apps" aria-labelledby="apps-h"><h2 id="apps-h">Apps</h2>${table}</section>`;
}

function renderInputs(record: RunRecord): string {
  const inputs = Object.keys(record.inputs).length > 0 ? renderValue('inputs', record.inputs) : '<p class="muted">No inputs.</p>';
  return `<section id="inputs" aria-labelledby="inputs-h"><h2 id="inputs-h">Inputs and trigger</h2>${inputs}${renderValue('trigger', record.trigger)}</section>`;
}

function renderFilesAndLogs(record: RunRecord, data: ReportData): string {
  const links = [
    ['run.json', 'run.json (the run record)'],
    ...data.logs.map((log) => [log.path, `${log.app} log`]),
  ].map(([path, label]) => `<li><a href="${escapeHref(path)}">${escapeHtml(label)}</a></li>`);
  const saved = record.steps.reduce((sum, step) => sum + step.files.length, 0);
  const images = [...data.thumbnails.values()].length;
  return (
    `<section id="files" aria-labelledby="files-h"><h2 id="files-h">Files and logs</h2><ul>${links.join('')}</ul>` +
    `<p class="muted">${saved} file${saved === 1 ? '' : 's'} saved from results (${images} with a preview), listed under their steps; <a href="./">the run folder</a> has them all.</p></section>`
  );
}
