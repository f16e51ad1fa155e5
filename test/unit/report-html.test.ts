import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { ItemRecord, RunRecord, StepRecord, StepStatus } from '../../src/artifacts/run-record.js';
import { layoutGraph, DAGRE_MAX_STEPS, NODE_HEIGHT } from '../../src/report/html/graph-layout.js';
import { gatherReportData, type ReportData } from '../../src/report/html/report-data.js';
import { renderReport } from '../../src/report/html/render-report.js';
import { makeThumbnails } from '../../src/report/html/thumbnails.js';
import { writeRunReport } from '../../src/report/html/write-report.js';

const T0 = Date.parse('2026-11-30T08:45:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

function step(id: string, overrides: Partial<StepRecord> = {}): StepRecord {
  return {
    id,
    uses: 'image.render_text',
    status: 'succeeded',
    attempts: 1,
    startedAt: at(0),
    endedAt: at(100),
    args: { text: 'Hi' },
    outputs: { path: '/x/logo.png' },
    text: '',
    files: [],
    policy: 'allow',
    policyReason: 'other',
    error: null,
    history: [{ attempt: 1, startedAt: at(10), endedAt: at(100), error: null }],
    needs: [],
    ...overrides,
  };
}

function item(index: number, status: StepStatus): ItemRecord {
  const error = status === 'succeeded' ? null : { kind: 'tool' as const, message: `item ${index} broke` };
  return { index, status, attempts: 1, args: { index }, outputs: null, text: '', files: [], error, history: [{ attempt: 1, startedAt: at(index), endedAt: at(index + 5), error }] };
}

function run(steps: StepRecord[], overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id: '20261130-084500-000-abcd',
    workflow: 'demo',
    workflowFile: '/w/demo.yaml',
    status: 'succeeded',
    trigger: { type: 'manual' },
    inputs: { company: 'Acme' },
    startedAt: at(0),
    endedAt: at(1000),
    dir: '/artifacts/demo/20261130-084500-000-abcd',
    apps: { image: { protocolVersion: '2026-07-28', server: { name: 'image', version: '1.0.0' } } },
    steps,
    ...overrides,
  };
}

const data = (record: RunRecord, more: Partial<ReportData> = {}): ReportData => ({ record, generatedAt: at(2000), logs: [], thumbnails: new Map(), ...more });

/** The tag names in `html` and every tag's text, for checking that nothing hostile became markup. */
function tagsOf(html: string): { names: Set<string>; tags: string[] } {
  const tags = html.match(/<[a-zA-Z][^>]*>/g) ?? [];
  return { names: new Set(tags.map((tag) => /^<([a-zA-Z][\w-]*)/.exec(tag)![1]!.toLowerCase())), tags };
}

describe('report.html', () => {
  it('renders hostile step ids, tool text, outputs and errors inert', () => {
    const hostile = '"><img src=x onerror=alert(1)><script>alert(2)</script>';
    const record = run([
      step(hostile, {
        uses: `app.<script>alert(3)</script>`,
        outputs: { html: '<script>alert(4)</script>', attr: hostile },
        text: `</pre><script>alert(5)</script>`,
        args: { q: "' onmouseover='alert(6)" },
        status: 'failed',
        error: { kind: 'tool', message: `bad ${hostile}` },
        elicitations: [{ message: '<iframe src=javascript:alert(7)>', action: 'decline', answered: [], source: 'none' }],
        files: ['/artifacts/demo/20261130-084500-000-abcd/s/"><svg onload=alert(8)>.png'],
      }),
      step('next', { needs: [hostile] }),
    ], { inputs: { name: '<script>alert(9)</script>' }, trigger: { type: 'watch', path: '<img src=x onerror=alert(10)>' } });
    const html = renderReport(data(record));

    const { names, tags } = tagsOf(html);
    // Only the renderer's own elements: nothing in the data became a tag (no script, no img, no iframe).
    const allowed = ['html', 'head', 'meta', 'title', 'style', 'body', 'a', 'main', 'header', 'p', 'h1', 'h2', 'h3', 'h4', 'span', 'dl', 'dt', 'dd', 'code', 'nav', 'ul', 'li', 'section', 'div', 'svg', 'defs', 'marker', 'path', 'g', 'rect', 'text', 'strong', 'table', 'caption', 'thead', 'tbody', 'tr', 'th', 'td', 'details', 'summary', 'pre', 'ol'];
    expect([...names].filter((name) => !allowed.includes(name))).toEqual([]);
    // No event-handler attribute: with quoted values blanked (a raw `"` inside one would end it early), no ` on…=` is left.
    expect(tags.map((tag) => tag.replace(/"[^"]*"/g, '""')).filter((tag) => /\son\w+\s*=/i.test(tag))).toEqual([]);
    expect(tags.every((tag) => !/'/.test(tag.replace(/"[^"]*"/g, '""')))).toBe(true);
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('&lt;script&gt;alert(4)&lt;/script&gt;');
    expect(html).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    // Step ids never become element ids or fragments: anchors are by position.
    expect(html).toContain('id="s-0"');
    expect(html).toContain('href="#s-0"');
    // The page may run nothing and load nothing.
    expect(html).toContain(`content="default-src 'none'; img-src data:;`);
  });

  it('says each status in words beside its colour, and counts foreach items', () => {
    const items = [...Array.from({ length: 12 }, (_, i) => item(i, 'succeeded')), item(12, 'failed'), item(13, 'failed')];
    const record = run(
      [
        step('ok'),
        step('fan', { items, status: 'failed', error: { kind: 'tool', message: 'item 12: item 12 broke' }, needs: ['ok'] }),
        step('later', { status: 'skipped', startedAt: null, endedAt: null, history: [], policy: null, needs: ['fan'] }),
        step('risky', { status: 'failed', error: { kind: 'transport', message: 'app connection lost', outcome: 'unknown' } }),
        step('nope', { status: 'denied', policy: 'deny', policyReason: 'rule sheet.*', error: { kind: 'policy', message: 'denied', outcome: 'not-sent' } }),
      ],
      { status: 'failed' },
    );
    const html = renderReport(data(record));
    expect(html).toContain('12/14 succeeded, 2 failed');
    for (const [id, status] of [['ok', 'succeeded'], ['fan', 'failed'], ['later', 'skipped'], ['risky', 'failed'], ['nope', 'denied']]) {
      expect(html).toMatch(new RegExp(`data-step="${id}" data-status="${status}"`));
    }
    expect(html).toContain('✔ succeeded');
    expect(html).toContain('✖ failed');
    expect(html).toContain('↷ skipped');
    expect(html).toContain('⊘ denied');
    expect(html).toContain('outcome: unknown');
    expect(html).toContain('rule sheet.*');
    // An arrow for each need.
    expect(html.match(/marker-end="url\(#arrow\)"/g)).toHaveLength(2);
    // Every item of the foreach has a timeline row.
    expect(html.match(/class="tl-row tl-item"/g)).toHaveLength(14);
  });

  it('renders a 1,000-step run with foreach items, every step in the graph', () => {
    const steps = Array.from({ length: 1000 }, (_, i) =>
      step(`step_${i}`, {
        needs: i === 0 ? [] : [`step_${Math.floor((i - 1) / 3)}`, ...(i > 10 ? [`step_${i - 7}`] : [])],
        ...(i % 100 === 0 && { items: Array.from({ length: 30 }, (_, j) => item(j, j % 10 === 0 ? 'failed' : 'succeeded')) }),
      }),
    );
    const started = performance.now();
    const html = renderReport(data(run(steps)));
    const took = performance.now() - started;
    console.log(`1,000 steps rendered in ${took.toFixed(0)} ms (${(html.length / 1024).toFixed(0)} KiB)`);
    expect(html.match(/<a href="#s-\d+" class="node /g)).toHaveLength(1000);
    expect(html).toContain('data-step="step_999"');
    expect(html).toContain('27/30 succeeded, 3 failed');
  });

  it('lays a graph out with every step below the steps it needs, by dagre or by level', () => {
    for (const count of [8, DAGRE_MAX_STEPS + 40]) {
      const nodes = Array.from({ length: count }, (_, i) => ({ id: `s${i}`, needs: i === 0 ? [] : [`s${Math.floor(i / 2)}`, 'unknown'] }));
      const layout = layoutGraph(nodes);
      const y = new Map(layout.nodes.map((node) => [node.id, node.y]));
      expect(layout.nodes).toHaveLength(count);
      expect(layout.edges).toHaveLength(count - 1);
      for (const node of nodes.slice(1)) expect(y.get(node.id)!).toBeGreaterThanOrEqual(y.get(node.needs[0]!)! + NODE_HEIGHT);
      expect(layout.nodes.every((node) => node.height === NODE_HEIGHT)).toBe(true);
      expect(Math.max(...layout.nodes.map((node) => node.y))).toBeLessThanOrEqual(layout.height);
    }
  });

  it('places a single step as dagre does: in the corner, the margin around it', () => {
    for (const height of [undefined, NODE_HEIGHT + 18]) {
      const layout = layoutGraph([{ id: 'only', needs: ['only'], height }]);
      const box = height ?? NODE_HEIGHT;
      // What dagre gave for one box of 210 × box with margins of 12.
      expect(layout).toEqual({ width: 234, height: box + 24, nodes: [{ id: 'only', x: 12, y: 12, height: box }], edges: [] });
    }
  });

  it('embeds thumbnails of saved images as data: URIs and links each to its file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-report-'));
    mkdirSync(join(dir, 'shot'));
    const image = join(dir, 'shot', 'a b#1.png');
    await sharp({ create: { width: 640, height: 320, channels: 3, background: '#36c' } }).png().toFile(image);
    const notImage = join(dir, 'shot', 'fake.png');
    writeFileSync(notImage, 'not a png');
    mkdirSync(join(dir, 'logs'));
    writeFileSync(join(dir, 'logs', 'image.log'), 'hello');

    const thumbnails = await makeThumbnails([image, notImage]);
    expect(thumbnails.get(image)).toMatchObject({ width: 160, height: 80 });
    expect(thumbnails.get(image)!.src).toMatch(/^data:image\/png;base64,/);
    expect(thumbnails.has(notImage)).toBe(false);

    const record = run([step('shot', { files: [image, notImage] })], { dir });
    const gathered = await gatherReportData(record);
    expect(gathered.logs).toEqual([{ app: 'image', path: 'logs/image.log' }]);
    const html = renderReport(gathered);
    expect(html).toContain('<a href="shot/a%20b%231.png" class="thumb"><img src="data:image/png;base64,');
    expect(html).toContain('<a href="shot/fake.png">shot/fake.png</a>');
    expect(html).toContain('<a href="logs/image.log">logs/image.log</a>');
  });
});

describe('writeRunReport', () => {
  it('writes the page renderReport makes, and a renderer that fails is thrown as it is, leaving no file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-report-write-'));
    const record = run([step('a'), step('b', { needs: ['a'], status: 'failed', error: { kind: 'tool', message: 'broke' } })], { dir });
    const file = await writeRunReport(record);
    expect(file).toBe(join(dir, 'report.html'));
    const written = readFileSync(file, 'utf8');
    const generatedAt = /runner report · written ([^<]+)</.exec(written)![1]!;
    expect(written).toBe(renderReport({ ...(await gatherReportData(record)), generatedAt }));

    // A step without its history (a record no runner writes) makes the timeline throw midway through the page.
    const brokenDir = mkdtempSync(join(tmpdir(), 'runner-report-write-'));
    const broken = run([step('a'), { ...step('b'), history: undefined as unknown as StepRecord['history'] }], { dir: brokenDir });
    const failure = await writeRunReport(broken).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect(readdirSync(brokenDir)).toEqual([]);
  });
});
