import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync, writeSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { startServe, type Event } from '../helpers/serve.js';
import { faultyWorkspace } from '../helpers/faulty-workspace.js';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, demoAppsYaml, repoRoot } from '../helpers/workspace.js';

// Real chokidar on temp folders and the real CLI: `runner serve|watch|cron`
// as a child process, observed through its --json events and what it leaves
// in the artifacts folder.

const ofType = (events: Event[], type: string) => events.filter((event) => event.type === type);
const finished = (events: Event[]) => ofType(events, 'run-finished');
const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const runRecords = (artifacts: string, workflow: string) =>
  existsSync(join(artifacts, workflow))
    ? readdirSync(join(artifacts, workflow))
        .filter((name) => existsSync(join(artifacts, workflow, name, 'run.json')))
        .map((name) => JSON.parse(readFileSync(join(artifacts, workflow, name, 'run.json'), 'utf8')))
    : [];

describe('runner watch', () => {
  it('runs once per file after its writes finish, claims it, skips same content, symlinks out and its own output', async () => {
    const ws = faultyWorkspace({
      'drop.yaml': [
        'name: drop',
        'on:',
        '  watch:',
        '    paths: ["artifacts/**"]     # everything, on purpose: the run folders must not feed back',
        '    events: [add, change]',
        '    debounce: 150ms',
        '    claim: move',
        'steps:',
        '  - id: work',
        '    uses: faulty.work',
        '    with: { label: "${{ trigger.source }}" }',
        '',
      ].join('\n'),
    });
    const inbox = join(ws.artifacts, 'inbox');
    ws.write('artifacts/inbox/old.txt', 'present at start\n');
    ws.write('outside/secret.txt', 'not for the runner\n');
    const serve = startServe(ws, ['watch']);
    await serve.until((events) => ofType(events, 'ready').length === 1, 'ready');

    writeFileSync(join(inbox, 'a.txt'), 'alpha\n');
    // Written slowly: six chunks 50 ms apart, one file descriptor. Each chunk restarts the 150 ms debounce, so
    // this holds while this process is not held up for 300 ms between two writes (the debounce and two of the
    // stability readings). A writer that pauses past the debounce is covered on the fake clock (test/unit/watch.test.ts).
    const slow = openSync(join(inbox, 'b.txt'), 'w');
    const chunks = Array.from({ length: 6 }, (_, i) => `chunk ${i}\n`);
    for (const chunk of chunks) {
      writeSync(slow, chunk);
      await sleep(50);
    }
    closeSync(slow);
    // Copied in with a rename: appears complete at once.
    ws.write('tmp/c.txt', 'gamma\n');
    renameSync(join(ws.dir, 'tmp', 'c.txt'), join(inbox, 'c.txt'));
    ws.write('artifacts/inbox/sub/e.txt', 'epsilon\n');
    symlinkSync(join(ws.dir, 'outside', 'secret.txt'), join(inbox, 'link.txt'));

    const sources = (events: Event[]) => ofType(events, 'trigger').filter((e) => e.action === 'run').map((e) => e.trigger.source);
    await serve.until((events) => finished(events).length >= 4, 'four runs');
    // The same content again, under another name: not run twice.
    writeFileSync(join(inbox, 'd.txt'), 'alpha\n');
    await serve.until((events) => ofType(events, 'trigger').some((e) => e.action === 'skipped' && e.trigger.source.endsWith('d.txt')), 'the duplicate skipped');
    // A fence instead of a pause: the same content once more, written after everything the runs wrote.
    // Its trigger (skipped) comes after the trigger of any run folder file, were they fed back.
    writeFileSync(join(inbox, 'fence.txt'), 'alpha\n');
    await serve.until((events) => ofType(events, 'trigger').some((e) => e.trigger.source.endsWith('fence.txt')), 'the fence looked at');
    expect(await serve.stop('SIGTERM')).toBe(0);

    expect(sources(serve.events).sort()).toEqual(['a.txt', 'b.txt', 'c.txt', join('sub', 'e.txt')].map((name) => join(inbox, name)));
    expect(lines(ws.counter).sort()).toEqual(sources(serve.events).sort());
    expect(finished(serve.events).every((e) => e.status === 'succeeded')).toBe(true);
    const skipped = ofType(serve.events, 'trigger').filter((e) => e.action === 'skipped');
    expect(skipped.find((e) => e.trigger.source.endsWith('d.txt'))?.reason).toMatch(/same content already ran/);
    expect(skipped.find((e) => e.trigger.source.endsWith('link.txt'))?.reason).toMatch(/symlink .* outside the watched folder/);

    // The slow file ran once, on its whole content.
    const records = runRecords(ws.artifacts, 'drop');
    const slowRun = records.find((record) => record.trigger.source.endsWith('b.txt'));
    // Claim folders beside the watched folder (here `artifacts`, so in the config folder); nothing left in processing/.
    expect(slowRun.trigger).toMatchObject({ type: 'watch', event: 'add', path: join(ws.dir, 'processing', 'b.txt'), hash: `sha256:${sha256(chunks.join(''))}` });
    expect(readdirSync(join(ws.dir, 'done')).sort()).toEqual(['a.txt', 'b.txt', 'c.txt', 'e.txt']);
    expect(readdirSync(join(ws.dir, 'processing'))).toEqual([]);
    expect(readdirSync(inbox).sort()).toEqual(['d.txt', 'fence.txt', 'link.txt', 'old.txt', 'sub']);
    expect(serve.stderr()).toMatch(/⚡ drop: add artifacts\/inbox\/a\.txt → run \d{8}-/);
    expect(serve.stderr()).toMatch(/✔ drop: run \S+ succeeded .* → done\/a\.txt/);
  });

  it('--initial runs files present at start; content is remembered across restarts', async () => {
    const ws = faultyWorkspace({
      'drop.yaml': 'name: drop\non:\n  watch: { paths: ["artifacts/inbox/*.txt"], debounce: 50ms }\nsteps:\n  - id: work\n    uses: faulty.work\n    with: { label: "${{ trigger.path }}" }\n',
    });
    ws.write('artifacts/inbox/old.txt', 'old\n');
    const first = startServe(ws, ['watch', '--initial']);
    await first.until((events) => finished(events).length === 1, 'the initial file run');
    expect(await first.stop('SIGINT')).toBe(0);
    ws.write('artifacts/inbox/again.txt', 'old\n'); // same content, while the runner is down
    const second = startServe(ws, ['watch', 'workflows/drop.yaml', '--initial']);
    await second.until((events) => ofType(events, 'trigger').length === 2, 'both files looked at');
    expect(await second.stop('SIGTERM')).toBe(0);
    expect(ofType(second.events, 'trigger').every((e) => e.action === 'skipped' && /same content already ran/.test(e.reason))).toBe(true);
    expect(lines(ws.counter)).toEqual([join(ws.artifacts, 'inbox', 'old.txt')]);
  });
});

// Each test has its own workspace and processes, and mostly waits on them: they run at once.
describe.concurrent('serve processes', () => {
  describe('stopping: SIGTERM lets runs finish within --grace, then cancels them', () => {
    const slowWorkflow = (ms: number) =>
      `name: slow\non:\n  watch: { paths: ["artifacts/inbox/*.txt"], debounce: 50ms, claim: move }\nsteps:\n  - id: wait\n    uses: faulty.slow\n    with: { ms: ${ms} }\n`;

    it('a run that finishes within the grace period: exit 0, file in done/', async ({ expect, onTestFinished }) => {
      const ws = faultyWorkspace({ 'slow.yaml': slowWorkflow(1_000) });
      const serve = startServe(ws, ['serve', '--grace', '10s'], { onTestFinished });
      await serve.until((events) => ofType(events, 'ready').length === 1, 'ready');
      ws.write('artifacts/inbox/a.txt', 'a\n');
      await serve.until((events) => ofType(events, 'run-started').length === 1, 'the run');
      expect(await serve.stop('SIGTERM')).toBe(0);
      expect(finished(serve.events).map((e) => e.status)).toEqual(['succeeded']);
      expect(ofType(serve.events, 'stopping')[0]).toMatchObject({ inFlight: 1, graceMs: 10_000 });
      expect(readdirSync(join(ws.artifacts, 'done'))).toEqual(['a.txt']);
    });

    it('a run still going when the grace period ends is cancelled: exit 130, recorded cancelled, file in failed/', async ({ expect, onTestFinished }) => {
      const ws = faultyWorkspace({ 'slow.yaml': slowWorkflow(60_000) });
      const serve = startServe(ws, ['serve', '--grace', '300ms'], { onTestFinished });
      await serve.until((events) => ofType(events, 'ready').length === 1, 'ready');
      ws.write('artifacts/inbox/a.txt', 'a\n');
      await serve.until((events) => ofType(events, 'run-started').length === 1, 'the run');
      // The call is in flight: the run store says its step is running.
      const runId = ofType(serve.events, 'run-started')[0]!.runId;
      const stepStatus = async () => {
        const shown = await runInProcess(['--config', ws.config, 'runs', 'show', runId, '--json'], { cwd: ws.dir });
        return shown.code === 0 ? JSON.parse(shown.stdout).steps[0]?.status : undefined;
      };
      await expect.poll(stepStatus, { timeout: 15_000, interval: 50 }).toBe('running');
      expect(await serve.stop('SIGTERM')).toBe(130);
      // What the stop did, in its own words rather than a stopwatch: it read --grace, and when that ran out it cancelled this run.
      expect(ofType(serve.events, 'stopping')[0]).toMatchObject({ inFlight: 1, graceMs: 300 });
      expect(ofType(serve.events, 'cancelling')[0]).toMatchObject({ runs: [runId] });
      const [record] = runRecords(ws.artifacts, 'slow');
      expect(record.status).toBe('cancelled');
      expect(record.steps[0].error.kind).toBe('cancelled');
      expect(readdirSync(join(ws.artifacts, 'failed'))).toEqual(['a.txt']);
      expect(serve.stderr()).toMatch(/cancelling 1 run/);
    });
  });

  describe('runner cron', () => {
    it('two processes on one artifacts folder, every second: each occurrence runs exactly once', async ({ expect, onTestFinished }) => {
      const ws = faultyWorkspace({
        'tick.yaml':
          'name: tick\non:\n  schedule:\n    - cron: "* * * * * *"\n      overlap: allow\nsteps:\n  - id: work\n    uses: faulty.work\n    with: { label: "${{ trigger.occurrence }}" }\n',
      });
      const a = startServe(ws, ['cron'], { onTestFinished });
      const b = startServe(ws, ['serve'], { onTestFinished });
      await Promise.all([a.until((e) => ofType(e, 'ready').length === 1, 'a ready'), b.until((e) => ofType(e, 'ready').length === 1, 'b ready')]);
      // Three occurrences finished, whichever process ran them: waited for, not timed.
      await expect.poll(() => finished([...a.events, ...b.events]).length, { timeout: 15_000, interval: 100 }).toBeGreaterThanOrEqual(3);
      expect(await Promise.all([a.stop('SIGTERM'), b.stop('SIGTERM')])).toEqual([0, 0]);

      const records = runRecords(ws.artifacts, 'tick');
      const occurrences = records.map((record) => record.trigger.occurrence as string).sort();
      expect(occurrences.length).toBeGreaterThanOrEqual(3);
      expect(new Set(occurrences).size).toBe(occurrences.length); // no occurrence ran twice
      expect(lines(ws.counter).sort()).toEqual(occurrences); // and each one's side effect happened once
      // No gaps: consecutive seconds from the first to the last.
      const seconds = occurrences.map((id) => Date.parse(id.slice('tick@'.length)) / 1000);
      expect(seconds.at(-1)! - seconds[0]! + 1).toBe(seconds.length);
      expect(records.every((record) => record.status === 'succeeded' && record.trigger.type === 'schedule')).toBe(true);
      // Both processes saw every occurrence; for each one, the other was told it was taken. The one that took it ran it,
      // or was stopped between taking it and starting its run, and said so (both are stopped at once here).
      const skipped = (reason: string) =>
        [...a.events, ...b.events].filter((e) => e.type === 'trigger' && e.action === 'skipped' && e.reason === reason).map((e) => e.trigger.occurrence);
      const stopping = skipped('the runner is stopping');
      expect(skipped('another runner process took this occurrence').every((id) => occurrences.includes(id) || stopping.includes(id))).toBe(true);
      expect(readdirSync(join(ws.artifacts, '.runner', 'locks')).length).toBeGreaterThanOrEqual(occurrences.length);
    });
  });
});

// These run at once with the serve processes above (consecutive concurrent blocks run together).
describe.concurrent('nothing starts on bad input (exit 2)', () => {
  it('a workflow without the trigger, a bad cron expression, a bad --grace', async ({ expect }) => {
    const ws = faultyWorkspace({
      'once.yaml': 'name: once\nsteps:\n  - id: a\n    uses: faulty.echo\n',
      'bad.yaml': 'name: bad\non:\n  schedule:\n    - cron: "0 25 * * *"\nsteps:\n  - id: a\n    uses: faulty.echo\n',
    });
    const noTrigger = await runInProcess(['--config', ws.config, 'watch', 'workflows/once.yaml'], { cwd: ws.dir });
    expect(noTrigger.code).toBe(2);
    expect(noTrigger.stderr).toContain('workflows/once.yaml has no `on.watch` trigger');
    const badCron = await runInProcess(['--config', ws.config, 'serve'], { cwd: ws.dir });
    expect(badCron.code).toBe(2);
    expect(badCron.stderr).toMatch(/workflows\/bad\.yaml:4:13: invalid cron expression `0 25 \* \* \*`.*Invalid value for hour: 25/);
    const badGrace = await runInProcess(['--config', ws.config, 'cron', 'workflows/bad.yaml', '--grace', '30'], { cwd: ws.dir });
    expect(badGrace.code).toBe(2);
    expect(badGrace.stderr).toContain('`--grace`: expected a duration like 500ms, 30s or 10m, got `30`');
    expect(existsSync(ws.artifacts)).toBe(false); // nothing ran
  });
});

describe.concurrent('example workflows', () => {
  it('every file in workflows/ validates with the repository config', async ({ expect }) => {
    const files = readdirSync(join(repoRoot, 'workflows')).filter((name) => name.endsWith('.yaml'));
    expect(files).toEqual(expect.arrayContaining(['inbox-thumbnails.yaml', 'nightly-report.yaml']));
    const result = await runInProcess(['validate', ...files.map((name) => join('workflows', name))], { cwd: repoRoot });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('inbox-thumbnails: two PNGs dropped, two catalog entries, run after run', async ({ expect, onTestFinished }) => {
    const ws = createWorkspace(
      demoAppsYaml() +
        'policy:\n  rules:\n    - { match: "sheet.write_range", action: allow }\n',
    );
    mkdirSync(join(ws.dir, 'workflows'));
    copyFileSync(join(repoRoot, 'workflows', 'inbox-thumbnails.yaml'), join(ws.dir, 'workflows', 'inbox-thumbnails.yaml'));
    const serve = startServe(ws, ['serve'], { onTestFinished });
    await serve.until((events) => ofType(events, 'ready').length === 1, 'ready');
    const inbox = join(ws.artifacts, 'inbox');
    for (const [name, color] of [['red.png', '#c00'], ['blue.png', '#00c']]) {
      const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: color } }).png().toBuffer();
      writeFileSync(join(ws.dir, name), png);
      renameSync(join(ws.dir, name), join(inbox, name));
    }
    await serve.until((events) => finished(events).length === 2, 'two runs', 25_000);
    expect(await serve.stop('SIGTERM')).toBe(0);
    expect(finished(serve.events).map((e) => e.status)).toEqual(['succeeded', 'succeeded']);
    expect(readdirSync(join(ws.artifacts, 'done')).sort()).toEqual(['blue.png', 'red.png']);
    const records = runRecords(ws.artifacts, 'inbox-thumbnails');
    const thumb = records[0].steps.find((step: { id: string }) => step.id === 'thumb');
    expect(thumb.outputs).toMatchObject({ width: 128, height: 85 });
    const catalog = join(ws.artifacts, 'inbox-thumbnails', 'catalog.xlsx');
    expect(existsSync(catalog)).toBe(true);
    const ExcelJS = (await import('exceljs')).default;
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(catalog);
    expect(workbook.worksheets.map((sheet) => sheet.name).sort()).toEqual(['About', ...records.map((record) => record.id)].sort());
    const entry = workbook.getWorksheet(records[0].id)!;
    expect(entry.getCell('B2').value).toBe(300);
    expect(String(entry.getCell('A2').value)).toMatch(/\.png$/);
  });
});
