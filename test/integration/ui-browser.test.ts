import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, type Browser } from '../helpers/browser.js';
import { cliPath, createWorkspace, faultyArgs } from '../helpers/workspace.js';

// `runner ui --allow-actions` in Chromium: start a workflow from the runs
// list, land on its page while it runs, and watch the page turn to succeeded
// without a reload (server-sent events). The workflow's first step runs
// until the test has seen the page show it running (the faulty app's `gate`).

let ui: ChildProcess | undefined;
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
  ui?.kill('SIGTERM');
});

/** `runner ui` on a free port; resolves with its URL once it listens. */
function startUi(dir: string, config: string): Promise<string> {
  const child = spawn(process.execPath, [cliPath, '--config', config, 'ui', '--port', '0', '--allow-actions'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  ui = child;
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const url = /^(http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(stdout)?.[1];
      if (url) resolve(url);
    });
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => reject(new Error(`runner ui exited (${code}): ${stderr}`)));
  });
}

describe('runner ui in a browser', () => {
  it('starts a workflow from the list and follows its page from running to succeeded without a reload', async () => {
    const ws = createWorkspace(`apps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n`);
    // The first step runs until the test has seen the page show it running.
    const gate = join(ws.dir, 'gate-open');
    ws.write(
      'workflows/slow.yaml',
      `name: slow\nsteps:\n  - id: wait\n    uses: faulty.gate\n    with: { path: ${JSON.stringify(gate)} }\n  - id: after\n    uses: faulty.slow\n    needs: [wait]\n    with: { ms: 10 }\n`,
    );
    const url = await startUi(ws.dir, ws.config);
    browser = await launchChromium({ width: 1000, height: 1100 });
    const page = await browser.context.newPage();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));

    await page.goto(url);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Runs');
    await page.getByRole('button', { name: 'run slow' }).click();
    await page.waitForURL(/\/runs\/[^/]+\/$/, { timeout: 30_000 });

    const live = page.locator('#live');
    expect(await live.getAttribute('data-status')).toBe('running');
    expect(await page.locator('svg.graph a.node[data-step="wait"]').getAttribute('data-status')).toMatch(/^(queued|running|pending)$/);
    // Anything the page keeps across an update proves there was no reload.
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = 'same page'));
    writeFileSync(gate, '');

    await expect.poll(() => page.locator('#live').getAttribute('data-status'), { timeout: 30_000, interval: 200 }).toBe('succeeded');
    expect(await page.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe('same page');
    expect(await page.locator('svg.graph a.node[data-step="wait"]').getAttribute('data-status')).toBe('succeeded');
    expect(await page.locator('svg.graph a.node[data-step="after"]').textContent()).toContain('succeeded');
    await screenshot(page, 'ui-run.png', ws.dir);

    // Back on the list, the run is there, and the status filter keeps it.
    await page.goto(`${url}?status=succeeded`);
    expect(await page.locator('table.runs tbody tr').count()).toBe(1);
    expect(await page.locator('table.runs tbody tr').textContent()).toContain('slow');
    // The pages asked for nothing but this server.
    expect(requests.filter((request) => !request.startsWith(url) && !request.startsWith('data:'))).toEqual([]);
  });
});
