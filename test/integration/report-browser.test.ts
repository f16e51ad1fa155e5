import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, type Browser } from '../helpers/browser.js';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, demoAppsYaml, repoRoot } from '../helpers/workspace.js';
const policy = `policy:\n  rules:\n    - { match: "sheet.write_range", action: allow }\n`;

describe('report.html in a browser', () => {
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
  });

  it('shows every step in the graph with its status, loads its thumbnail, and requests nothing but file: and data:', async () => {
    const ws = createWorkspace(demoAppsYaml() + policy);
    const result = await runInProcess(['--config', ws.config, 'run', join(repoRoot, 'workflows', 'logo-to-quote.yaml'), '--json', '-i', 'company=Initech'], { cwd: ws.dir });
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout) as { dir: string; steps: { id: string; status: string }[] };

    browser = await launchChromium();
    const page = await browser.context.newPage();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(pathToFileURL(join(record.dir, 'report.html')).href, { waitUntil: 'load' });

    const nodes = await page.$$eval('svg.graph a.node', (links) =>
      links.map((link) => ({ id: (link as SVGElement).dataset.step, status: (link as SVGElement).dataset.status, text: link.textContent ?? '' })),
    );
    expect(nodes.map((node) => node.id).sort()).toEqual(record.steps.map((step) => step.id).sort());
    for (const step of record.steps) {
      const node = nodes.find((candidate) => candidate.id === step.id)!;
      expect(node.status).toBe(step.status);
      expect(node.text).toContain(step.status); // in words, not only in colour
    }

    const thumbnails = await page.$$eval('a.thumb img', (images) => images.map((image) => ({ width: (image as HTMLImageElement).naturalWidth, href: image.parentElement!.getAttribute('href') })));
    expect(thumbnails.length).toBeGreaterThan(0);
    expect(thumbnails[0]!.width).toBeGreaterThan(0);
    expect(thumbnails[0]!.href).toMatch(/^preview\//);

    await screenshot(page, 'report.png', ws.dir);

    // A keyboard user reaches a step's box: links in the graph take focus.
    await page.focus('svg.graph a.node');
    expect(await page.evaluate(() => (document.activeElement as SVGElement | null)?.dataset?.step)).toBeTruthy();

    // A narrow window: the page does not scroll sideways (the graph scrolls in its own box).
    await page.setViewportSize({ width: 380, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(380);

    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((url) => !url.startsWith('file:') && !url.startsWith('data:'))).toEqual([]);
  });
});
