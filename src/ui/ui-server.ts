import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { RunStatus } from '../artifacts/run-record.js';
import { parseDuration } from '../config/durations.js';
import { escapeHtml } from '../report/html/escape-html.js';
import { gatherReportData } from '../report/html/report-data.js';
import { renderReport } from '../report/html/render-report.js';
import { displayRecord } from '../store/run-history.js';
import type { RunFilter, RunStore, StoredRun } from '../store/run-store.js';
import { RunnerError } from '../errors.js';
import { approverName } from '../scheduler/approval.js';
import { answerWaitingStep } from '../scheduler/answer-approval.js';
import { startCliAction } from './actions.js';
import { renderRunPage, renderRunsPage, type PageContext } from './pages.js';
import { serveFileUnder } from './run-files.js';
import { UI_SCRIPT } from './ui-script.js';

export interface UiOptions {
  store: RunStore;
  artifacts: string;
  /** The config's folder: `run now` offers its `workflows/*.yaml`. */
  configDir: string;
  /** Passed to the actions' `runner` processes as `--config`. */
  configPath?: string;
  /** `--allow-actions`: resume and run now, each request with the per-start token, same origin only. */
  allowActions: boolean;
  /** How often a run's page checks the store for changes. @default 500 */
  pollMs?: number;
}

/** Runs shown per page of the list. */
const PAGE_SIZE = 200;
const STATUSES: RunStatus[] = ['running', 'waiting', 'succeeded', 'failed', 'cancelled'];
/** A comment every so often keeps proxies and browsers from closing a quiet event stream. */
const KEEPALIVE_MS = 15_000;

// Pages come from this server only; the UI's one script is a file of its own, so no inline script runs.
const CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/**
 * The UI as a Hono app: the runs list with filters, a run's page (its
 * report) that follows the run over server-sent events, the run's files,
 * and with `allowActions` the actions (resume, run now, approve or deny a waiting step). Every request must
 * name this server in `Host` (a page of another site that resolves its own
 * name to 127.0.0.1 gets nothing); actions also need the per-start token and
 * a same-origin `Origin`.
 */
export function createUiApp(options: UiOptions): { app: Hono; token?: string; setOrigins: (origins: string[]) => void } {
  const token = options.allowActions ? randomBytes(24).toString('base64url') : undefined;
  const context: PageContext = token ? { token } : {};
  let origins: string[] = [];
  const app = new Hono();

  app.use('*', async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (!origins.some((origin) => new URL(origin).host === host)) return c.text(`unexpected Host \`${host}\``, 421);
    await next();
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    c.header('x-frame-options', 'DENY');
    if (!c.res.headers.has('content-security-policy')) c.header('content-security-policy', CSP);
  });

  app.get('/assets/ui.js', (c) => c.body(UI_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }));

  app.get('/', async (c) => {
    const filter = runFilter(c);
    if (typeof filter === 'string') return c.html(renderRunsPage({ runs: [], filter: {}, workflows: options.store.workflowNames(), runnable: [], context }).replace('<h1>Runs</h1>', `<h1>Runs</h1><p class="error">${escapeHtml(filter)}</p>`), 400);
    const found = options.store.listRuns({ ...filter, limit: PAGE_SIZE + 1 });
    const runs = found.slice(0, PAGE_SIZE);
    const last = runs.at(-1);
    return c.html(
      renderRunsPage({
        runs,
        filter,
        workflows: options.store.workflowNames(),
        runnable: token ? await workflowFiles(options.configDir) : [],
        ...(found.length > PAGE_SIZE && last && { olderCursor: Date.parse(last.startedAt) }),
        context,
      }),
    );
  });

  app.get('/runs/:id', (c) => c.redirect(`/runs/${encodeURIComponent(c.req.param('id'))}/`, 301));

  app.get('/runs/:id/', async (c) => {
    const stored = options.store.getRun(c.req.param('id'));
    if (!stored) return c.html(notFound(c.req.param('id'), context), 404);
    const record = displayRecord(stored);
    const report = renderReport(await gatherReportData(record, { artifacts: options.artifacts }));
    return c.html(renderRunPage(report, record, context));
  });

  app.get('/runs/:id/events', (c) => {
    const id = c.req.param('id');
    if (!options.store.getRun(id)) return c.text('no such run', 404);
    return streamSSE(c, async (stream) => {
      let last = signature(options.store.getRun(id));
      let quietMs = 0;
      const pollMs = options.pollMs ?? 500;
      while (!stream.aborted) {
        await stream.sleep(pollMs);
        const stored = options.store.getRun(id);
        const now = signature(stored);
        if (now !== last) {
          last = now;
          quietMs = 0;
          await stream.writeSSE({ event: 'changed', data: stored?.run.status ?? 'gone' });
        } else if ((quietMs += pollMs) >= KEEPALIVE_MS) {
          quietMs = 0;
          await stream.write(': still here\n\n');
        }
        if (!stored || stored.run.status !== 'running') {
          await stream.writeSSE({ event: 'finished', data: stored?.run.status ?? 'gone' });
          return;
        }
      }
    });
  });

  // Links in a report are relative to its run folder; the apps' shared logs are two levels up.
  app.get('/runs/:id/*', async (c) => {
    const stored = options.store.getRun(c.req.param('id'));
    if (!stored) return c.text('no such run', 404);
    const prefix = `/runs/${encodeURIComponent(c.req.param('id'))}/`;
    const path = decodePath(c.req.path.slice(prefix.length));
    return (path !== undefined && (await serveFileUnder(stored.run.dir, path))) || c.text('no such file in this run', 404);
  });
  app.get('/.runner/logs/:name', async (c) => {
    const name = c.req.param('name');
    if (!/^[A-Za-z0-9_-]+\.log$/.test(name)) return c.text('no such log', 404);
    return (await serveFileUnder(join(options.artifacts, '.runner', 'logs'), name)) ?? c.text('no such log', 404);
  });

  if (token) {
    const guard = (c: Context): Response | undefined => {
      const origin = c.req.header('origin');
      if (!origin || !origins.includes(origin)) return c.json({ error: 'actions are taken only from this UI’s own pages (Origin)' }, 403);
      if (c.req.header('sec-fetch-site') && c.req.header('sec-fetch-site') !== 'same-origin') return c.json({ error: 'cross-site request' }, 403);
      const given = Buffer.from(c.req.header('x-runner-token') ?? '');
      const wanted = Buffer.from(token);
      if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return c.json({ error: 'missing or wrong token: reload the page' }, 403);
      return undefined;
    };
    app.post('/runs/:id/resume', async (c) => {
      const refused = guard(c);
      if (refused) return refused;
      const stored = options.store.getRun(c.req.param('id'));
      if (!stored) return c.json({ error: 'no such run' }, 404);
      if (stored.run.status === 'running' || stored.run.status === 'succeeded') return c.json({ error: `the run ${stored.run.status}: there is nothing to resume` }, 409);
      const started = await startCliAction(['resume', stored.run.id], { cwd: options.configDir, configPath: options.configPath, artifacts: options.artifacts, name: `resume-${stored.run.id}` });
      if (!started.runId) return c.json({ error: `runner resume did not start (see ${started.log})` }, 500);
      return c.json({ run: started.runId, message: `resumed; output in ${started.log}` }, 202);
    });
    // Approve and deny answer in the store at once (no process to start): serve, or a resume, then continues the run.
    const answer = (decision: 'approved' | 'denied') => (c: Context) => {
      const refused = guard(c);
      if (refused) return refused;
      try {
        const { runId, stepId, approval } = answerWaitingStep(options.store, options.artifacts, {
          run: c.req.param('id')!,
          step: c.req.param('step')!,
          decision,
          by: approverName(process.env),
          via: 'ui',
          nowMs: Date.now(),
        });
        return c.json({ approval, message: `${decision} step ${stepId} of run ${runId} as ${approval.by}; serve continues it by itself, or resume it` }, 200);
      } catch (error) {
        if (!(error instanceof RunnerError)) throw error;
        return c.json({ error: error.hint ? `${error.message} (${error.hint})` : error.message }, error.code === 'not-found' ? 404 : 409);
      }
    };
    app.post('/runs/:id/steps/:step/approve', answer('approved'));
    app.post('/runs/:id/steps/:step/deny', answer('denied'));
    app.post('/workflows/:name/run', async (c) => {
      const refused = guard(c);
      if (refused) return refused;
      const workflow = (await workflowFiles(options.configDir)).find((candidate) => candidate.name === c.req.param('name'));
      if (!workflow) return c.json({ error: `no workflow \`${c.req.param('name')}\` in ${join(options.configDir, 'workflows')}` }, 404);
      const started = await startCliAction(['run', workflow.file], { cwd: options.configDir, configPath: options.configPath, artifacts: options.artifacts, name: `run-${workflow.name}` });
      if (!started.runId) return c.json({ error: `runner run did not start (see ${started.log})` }, 500);
      return c.json({ run: started.runId, message: `started; output in ${started.log}` }, 202);
    });
  }

  return { app, ...(token && { token }), setOrigins: (list) => (origins = list) };
}

export interface RunningUi {
  url: string;
  token?: string;
  close(): Promise<void>;
}

/** Serves the UI on `host:port` (port 0: a free one); resolves once it listens. */
export async function startUi(options: UiOptions & { host: string; port: number }): Promise<RunningUi> {
  const { app, token, setOrigins } = createUiApp(options);
  let server: ServerType | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    server = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, (info) => resolve(info.port));
    server.once('error', reject);
  });
  const shown = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${shown}:${port}`;
  setOrigins(options.host === '127.0.0.1' ? [url, `http://localhost:${port}`] : [url]);
  return {
    url,
    ...(token && { token }),
    close: () =>
      new Promise<void>((resolve) => {
        const http = server as unknown as { closeAllConnections?: () => void; close: (done: () => void) => void };
        http.closeAllConnections?.();
        http.close(() => resolve());
      }),
  };
}

/** The list's filter from the query: workflow, status, since (a duration back from now, or a date), before (a cursor). */
function runFilter(c: Context): (RunFilter & { since?: string }) | string {
  const filter: RunFilter & { since?: string } = {};
  const workflow = c.req.query('workflow');
  const status = c.req.query('status');
  const since = c.req.query('since')?.trim();
  const before = c.req.query('before');
  if (workflow) filter.workflow = workflow;
  if (status) {
    if (!STATUSES.includes(status as RunStatus)) return `status: expected one of ${STATUSES.join(', ')}`;
    filter.status = status as RunStatus;
  }
  if (since) {
    const back = parseDuration(since);
    const at = back === undefined ? Date.parse(since) : Date.now() - back;
    if (!Number.isFinite(at)) return `since: expected a duration like 24h or 7d, or a date like 2026-11-30, got ${since}`;
    filter.since = since;
    filter.sinceMs = at;
  }
  if (before && /^\d+$/.test(before)) filter.beforeMs = Number(before);
  return filter;
}

/** What changes when a run moves on: its status and end, each step's status, attempts and items. */
function signature(stored: StoredRun | undefined): string {
  if (!stored) return 'gone';
  let text = `${stored.run.status}|${stored.run.endedAt ?? ''}`;
  for (const step of stored.steps) {
    text += `|${step.record.status}:${step.record.attempts}`;
    if (step.items) for (const item of step.items) text += `,${item.status}:${item.attempts}`;
  }
  return text;
}

/** `workflows/*.yaml` (and .yml) under the config's folder, by workflow file name. */
async function workflowFiles(configDir: string): Promise<{ name: string; file: string }[]> {
  const folder = join(configDir, 'workflows');
  const names = await readdir(folder).catch(() => [] as string[]);
  return names
    .filter((name) => /^[A-Za-z0-9][A-Za-z0-9_.-]*\.ya?ml$/.test(name))
    .sort()
    .map((name) => ({ name: name.replace(/\.ya?ml$/, ''), file: join(folder, name) }));
}

function decodePath(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

function notFound(id: string, context: PageContext): string {
  return renderRunsPage({ runs: [], filter: {}, workflows: [], runnable: [], context }).replace('<h1>Runs</h1>', `<h1>No run ${escapeHtml(id)}</h1>`);
}
