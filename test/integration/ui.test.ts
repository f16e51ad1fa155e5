import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/artifacts/run-record.js';
import { SqliteRunStore } from '../../src/store/sqlite-run-store.js';
import type { RunStore } from '../../src/store/run-store.js';
import { createUiApp } from '../../src/ui/ui-server.js';
import { run, save, step } from '../helpers/run-store-contract.js';

// The UI's server against a real SQLite run store, through its fetch handler:
// the routes, the Host and origin checks, the file guard and the live stream.
// The browser test (ui-browser.test.ts) drives the same server in Chromium.

const ORIGIN = 'http://127.0.0.1:8787';
let artifacts: string;
let store: RunStore;
let running: RunRecord;

beforeAll(() => {
  artifacts = mkdtempSync(join(tmpdir(), 'runner-ui-'));
  store = new SqliteRunStore(artifacts);
  for (let n = 0; n < 250; n++) {
    // One run every 7 seconds from 10:00:00.
    const at = new Date(Date.UTC(2026, 10, 30, 10, 0, n * 7));
    const id = `20261130-${at.toISOString().slice(11, 19).replaceAll(':', '')}-000-a${String(n).padStart(3, '0')}`;
    save(store, { ...run(id, n % 2 === 0 ? 'even' : 'odd', n % 5 === 0 ? 'failed' : 'succeeded'), dir: join(artifacts, 'x', id), endedAt: run(id).startedAt });
  }
  const dir = join(artifacts, 'live', '20261130-235959-000-live');
  mkdirSync(join(dir, 'shot'), { recursive: true });
  writeFileSync(join(dir, 'shot', 'page.html'), '<script>alert(1)</script>');
  writeFileSync(join(dir, 'shot', 'mark.svg'), '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  writeFileSync(join(artifacts, 'secret.txt'), 'outside the run');
  symlinkSync(join(artifacts, 'secret.txt'), join(dir, 'shot', 'link.txt'));
  running = { ...run('20261130-235959-000-live', 'live', 'running', [step('first', 'succeeded'), step('second', 'running')]), dir };
  save(store, running);
});

afterAll(() => store?.close());

function ui(options: { allowActions?: boolean; pollMs?: number } = {}) {
  const made = createUiApp({ store, artifacts, configDir: artifacts, allowActions: options.allowActions ?? false, pollMs: options.pollMs ?? 20 });
  made.setOrigins([ORIGIN]);
  const get = (path: string, headers: Record<string, string> = {}) => made.app.fetch(new Request(`${ORIGIN}${path}`, { headers: { host: '127.0.0.1:8787', ...headers } }));
  const post = (path: string, headers: Record<string, string> = {}) => made.app.fetch(new Request(`${ORIGIN}${path}`, { method: 'POST', headers: { host: '127.0.0.1:8787', ...headers } }));
  return { ...made, get, post };
}

describe('runner ui: the server', () => {
  it('lists runs newest first, 200 to a page with a link to older ones, and filters by workflow, status and time', async () => {
    const { get } = ui();
    const first = await (await get('/')).text();
    const ids = [...first.matchAll(/href="\/runs\/([^/"]+)\/"/g)].map((match) => match[1]);
    expect(ids).toHaveLength(200);
    expect(ids[0]).toBe('20261130-235959-000-live');
    const older = /href="\/\?([^"]+)" rel|rel="next" href="\/\?([^"]+)"/.exec(first);
    const query = (older?.[1] ?? older?.[2])!.replaceAll('&amp;', '&');
    const second = await (await get(`/?${query}`)).text();
    const rest = [...second.matchAll(/href="\/runs\/([^/"]+)\/"/g)].map((match) => match[1]);
    expect(rest).toHaveLength(51);
    expect(new Set([...ids, ...rest]).size).toBe(251);

    const failedEven = await (await get('/?workflow=even&status=failed')).text();
    const filtered = [...failedEven.matchAll(/<tr class="st-(\w+)"><td><a href="\/runs\/[^"]+"[^>]*>[^<]+<\/a><\/td><td>(\w+)<\/td>/g)];
    expect(filtered.length).toBe(25);
    expect(filtered.every(([, status, workflow]) => status === 'failed' && workflow === 'even')).toBe(true);
    expect(await (await get('/?since=2026-11-30T23:59:00Z')).text()).toContain('1 run, newest first');
    const bad = await get('/?since=yesterday-ish');
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('since: expected a duration like 24h or 7d');
  });

  it('answers only requests that name it in Host, and sends a policy that allows its own script only', async () => {
    const { get } = ui();
    expect((await get('/', { host: 'attacker.example:8787' })).status).toBe(421);
    const page = await get('/');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
  });

  it('shows a run as its report with the live region, and serves its files: text as text, SVG sandboxed, nothing outside the run', async () => {
    const { get } = ui();
    const page = await (await get(`/runs/${running.id}/`)).text();
    expect(page).toContain('id="live"');
    expect(page).toContain('data-status="running"');
    expect(page).toContain('/assets/ui.js');
    expect(page).not.toContain('runner-token');
    expect((await get(`/runs/${running.id}`)).status).toBe(301);
    expect((await get('/runs/nope/')).status).toBe(404);

    const html = await get(`/runs/${running.id}/shot/page.html`);
    expect(html.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const svg = await get(`/runs/${running.id}/shot/mark.svg`);
    expect(svg.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect((await get(`/runs/${running.id}/shot/link.txt`)).status).toBe(404);
    expect((await get(`/runs/${running.id}/..%2F..%2Fsecret.txt`)).status).toBe(404);
    expect((await get(`/runs/${running.id}/shot/%2e%2e/%2e%2e/%2e%2e/secret.txt`)).status).toBe(404);
  });

  it('streams `changed` when the run moves on and `finished` when it ends', async () => {
    const { get } = ui({ pollMs: 10 });
    const response = await get(`/runs/${running.id}/events`);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const until = async (pattern: RegExp) => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${pattern}: ${text}`);
        text += value;
      }
    };
    store.write({ runId: running.id, steps: [{ position: 1, record: { ...step('second', 'succeeded'), attempts: 1 } }] });
    await until(/event: changed/);
    store.write({ runId: running.id, run: { ...running, status: 'succeeded', endedAt: new Date().toISOString(), steps: undefined } as never });
    await until(/event: finished\ndata: succeeded/);
    await reader.cancel();
  });

  it('read-only by default; with actions, a request needs the page token and this origin', async () => {
    expect((await ui().post(`/runs/${running.id}/resume`, { origin: ORIGIN })).status).toBe(404);
    const { post, get, token } = ui({ allowActions: true });
    expect(token).toMatch(/^[\w-]{32}$/);
    expect(await (await get('/')).text()).toContain(`<meta name="runner-token" content="${token}">`);
    const noToken = await post('/runs/20261130-100000-000-a000/resume', { origin: ORIGIN });
    expect(noToken.status).toBe(403);
    const otherSite = await post('/runs/20261130-100000-000-a000/resume', { origin: 'http://attacker.example', 'x-runner-token': token! });
    expect(otherSite.status).toBe(403);
    const crossSite = await post('/runs/20261130-100000-000-a000/resume', { origin: ORIGIN, 'sec-fetch-site': 'cross-site', 'x-runner-token': token! });
    expect(crossSite.status).toBe(403);
    // Allowed through the guards, a resume of a run that succeeded is refused for what it is.
    const done = await post('/runs/20261130-100007-000-a001/resume', { origin: ORIGIN, 'x-runner-token': token! });
    expect(done.status).toBe(409);
    expect((await done.json()).error).toContain('succeeded');
  });

  it('approves or denies a waiting step from its page: buttons only with actions on, the same guards, the answer recorded once with its user', async () => {
    const id = '20261130-235958-000-beef';
    const approval = { requestedAt: '2026-11-30T23:59:58.000Z', expiresAt: '2099-01-01T00:00:00.000Z' };
    save(store, { ...run(id, 'gate', 'waiting', [step('first', 'succeeded'), { ...step('purge', 'waiting'), approval }, { ...step('wipe', 'waiting'), approval }]), dir: join(artifacts, 'gate', id) });
    const readOnly = await (await ui().get(`/runs/${id}/`)).text();
    expect(readOnly).not.toContain('data-action="approve"');
    expect((await ui().post(`/runs/${id}/steps/purge/approve`, { origin: ORIGIN })).status).toBe(404);

    const { post, get, token } = ui({ allowActions: true });
    const page = await (await get(`/runs/${id}/`)).text();
    expect(page).toContain(`data-action="approve" data-run="${id}" data-step="purge"`);
    expect(page).toContain(`data-action="deny" data-run="${id}" data-step="wipe"`);
    expect((await post(`/runs/${id}/steps/purge/approve`, { origin: 'http://attacker.example', 'x-runner-token': token! })).status).toBe(403);
    expect((await post(`/runs/${id}/steps/purge/approve`, { origin: ORIGIN })).status).toBe(403);

    const headers = { origin: ORIGIN, 'x-runner-token': token! };
    const approved = await post(`/runs/${id}/steps/purge/approve`, headers);
    expect(approved.status).toBe(200);
    expect((await approved.json()).approval).toMatchObject({ decision: 'approved', by: expect.any(String), via: 'ui' });
    const again = await post(`/runs/${id}/steps/purge/deny`, headers);
    expect(again.status).toBe(409);
    expect((await again.json()).error).toContain('answered already');
    expect((await post(`/runs/${id}/steps/first/deny`, headers)).status).toBe(409);
    expect((await post(`/runs/${id}/steps/wipe/deny`, headers)).status).toBe(200);
    expect(store.getRun(id)!.steps.map((s) => s.record.approval?.decision)).toEqual([undefined, 'approved', 'denied']);
    // Answered steps lose their buttons.
    expect(await (await get(`/runs/${id}/`)).text()).not.toContain('data-action="deny"');
  });
});
