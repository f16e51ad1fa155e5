import type { RunStatus } from '../artifacts/run-record.js';
import { formatMs } from '../config/durations.js';
import { escapeHtml } from '../report/html/escape-html.js';
import { statusBadge } from '../report/html/report-format.js';
import { REPORT_CSS } from '../report/html/report-style.js';
import type { RunFilter, RunSummary } from '../store/run-store.js';

/** What every page of the UI says about the server: whether actions are on, and the token they need. */
export interface PageContext {
  /** Set when started with `--allow-actions`: the per-start token the page's requests carry. */
  token?: string;
}

export const UI_CSS = `${REPORT_CSS}
header.bar{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;padding:.5rem 1rem;border-bottom:1px solid var(--line);background:var(--panel)}
header.bar a.home{font-weight:700;text-decoration:none}
form.filters{display:flex;flex-wrap:wrap;gap:.6rem;align-items:end;margin:.6rem 0}
form.filters label{display:flex;flex-direction:column;font-size:.85rem;color:var(--muted)}
input,select,button{font:inherit;padding:.2rem .4rem}
button{cursor:pointer}
table.runs{width:100%}
.live{font-size:.85rem;color:var(--muted)}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.4rem 0}
.bar-run{max-width:1200px;margin:0 auto;padding:.4rem 1rem 0}
`;

const STATUSES: RunStatus[] = ['running', 'waiting', 'succeeded', 'failed', 'cancelled'];

/** The page shell: the UI's header, its stylesheet, and the one script (live updates, actions). */
export function page(title: string, body: string, context: PageContext): string {
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    context.token ? `<meta name="runner-token" content="${escapeHtml(context.token)}">` : '',
    `<title>${escapeHtml(title)}</title><style>${UI_CSS}</style>`,
    '<script src="/assets/ui.js" defer></script></head><body>',
    '<header class="bar"><a class="home" href="/">runner</a><span class="muted">runs</span>',
    context.token ? '<span class="badge st-running">actions on</span>' : '<span class="muted">read-only</span>',
    '</header>',
    body,
    '</body></html>\n',
  ].join('');
}

export interface RunsPageInput {
  runs: RunSummary[];
  filter: RunFilter & { since?: string };
  workflows: string[];
  /** Workflow files that `run now` can start (actions on). */
  runnable: { name: string; file: string }[];
  /** When more runs match than are shown: the `before` cursor of the next page. */
  olderCursor?: number;
  context: PageContext;
}

/** The runs list: filters (workflow, status, since), newest first, one page at a time. */
export function renderRunsPage(input: RunsPageInput): string {
  const { filter } = input;
  const option = (value: string, selected: boolean, label = value) => `<option value="${escapeHtml(value)}"${selected ? ' selected' : ''}>${escapeHtml(label)}</option>`;
  const filters = [
    '<form class="filters" method="get" action="/" role="search" aria-label="filter runs">',
    `<label>workflow<select name="workflow">${option('', !filter.workflow, 'any')}${input.workflows.map((name) => option(name, name === filter.workflow)).join('')}</select></label>`,
    `<label>status<select name="status">${option('', !filter.status, 'any')}${STATUSES.map((status) => option(status, status === filter.status)).join('')}</select></label>`,
    `<label>since<input name="since" value="${escapeHtml(filter.since ?? '')}" placeholder="24h, 7d or 2026-11-30" size="14"></label>`,
    '<button type="submit">show</button></form>',
  ].join('');
  const rows = input.runs.map((run) => {
    const took = run.endedAt ? formatMs(run.durationMs ?? Date.parse(run.endedAt) - Date.parse(run.startedAt)) : '';
    return (
      `<tr class="st-${escapeHtml(run.status)}"><td><a href="/runs/${encodeURIComponent(run.id)}/">${escapeHtml(run.id)}</a></td>` +
      `<td>${escapeHtml(run.workflow)}</td><td>${statusBadge(run.status)}</td><td>${escapeHtml(run.trigger.type)}</td>` +
      `<td><time datetime="${escapeHtml(run.startedAt)}">${escapeHtml(run.startedAt)}</time></td><td>${escapeHtml(took)}</td></tr>`
    );
  });
  const table =
    rows.length === 0
      ? '<p>No runs match.</p>'
      : `<div class="scroll"><table class="runs"><caption>${rows.length} run${rows.length === 1 ? '' : 's'}, newest first</caption>` +
        '<thead><tr><th scope="col">run</th><th scope="col">workflow</th><th scope="col">status</th><th scope="col">trigger</th><th scope="col">started</th><th scope="col">took</th></tr></thead>' +
        `<tbody>${rows.join('')}</tbody></table></div>`;
  const older = input.olderCursor === undefined ? '' : `<p><a rel="next" href="/?${olderQuery(filter, input.olderCursor)}">older runs →</a></p>`;
  const runNow =
    input.context.token && input.runnable.length > 0
      ? `<section aria-labelledby="run-now-h"><h2 id="run-now-h">Run now</h2><div class="actions">${input.runnable
          .map((workflow) => `<button type="button" data-action="run" data-workflow="${escapeHtml(workflow.name)}">run ${escapeHtml(workflow.name)}</button>`)
          .join('')}</div><p class="live" role="status" aria-live="polite" id="action-status"></p></section>`
      : '';
  return page('runner: runs', `<main><h1>Runs</h1>${filters}${runNow}${table}${older}</main>`, input.context);
}

function olderQuery(filter: RunsPageInput['filter'], before: number): string {
  const params = new URLSearchParams();
  if (filter.workflow) params.set('workflow', filter.workflow);
  if (filter.status) params.set('status', filter.status);
  if (filter.since) params.set('since', filter.since);
  params.set('before', String(before));
  return escapeHtml(params.toString());
}

/**
 * A run's page: its report, without the report's own policy (the server
 * sends one that lets the UI's script in), with the UI's header and a live
 * region the script keeps current while the run goes on.
 */
export function renderRunPage(
  reportHtml: string,
  run: { id: string; workflow: string; status: RunStatus; steps: { id: string; status: string; approval?: { decision?: string } }[] },
  context: PageContext,
): string {
  const bodyStart = reportHtml.indexOf('<body>') + '<body>'.length;
  const body = reportHtml.slice(bodyStart, reportHtml.lastIndexOf('</body>'));
  const live = run.status === 'running' ? 'live: this page follows the run' : run.status === 'waiting' ? 'the run waits for an approval' : `the run ${run.status}`;
  const actions =
    context.token && (run.status === 'failed' || run.status === 'cancelled')
      ? `<div class="actions"><button type="button" data-action="resume" data-run="${escapeHtml(run.id)}">resume this run</button></div>`
      : context.token && run.status === 'waiting'
        ? `<div class="actions">${answerButtons(run)}</div>`
        : '';
  const bar = `<div class="bar-run"><p class="live" role="status" aria-live="polite" id="live" data-run="${escapeHtml(run.id)}" data-status="${escapeHtml(run.status)}">${escapeHtml(live)}</p>${actions}<p class="live" id="action-status" role="status" aria-live="polite"></p></div>`;
  return page(`${run.workflow} ${run.id}: ${run.status}`, bar + body, context);
}

/** Approve and deny for each step of a waiting run that waits for an answer. */
function answerButtons(run: { id: string; steps: { id: string; status: string; approval?: { decision?: string } }[] }): string {
  const attributes = (step: string) => `data-run="${escapeHtml(run.id)}" data-step="${escapeHtml(step)}"`;
  return run.steps
    .filter((step) => step.status === 'waiting' && !step.approval?.decision)
    .map(
      (step) =>
        `<button type="button" data-action="approve" ${attributes(step.id)}>approve ${escapeHtml(step.id)}</button>` +
        `<button type="button" data-action="deny" ${attributes(step.id)}>deny ${escapeHtml(step.id)}</button>`,
    )
    .join('');
}
