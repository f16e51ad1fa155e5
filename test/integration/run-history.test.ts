// The run store seen through the CLI: `runs` (filters, show), `runs prune`,
// `logs`, runs recorded before the store existed, several processes on one
// artifacts folder, `retention:` under `serve`, and the programmatic API.
// Commands run in this process; a run or serve that must be a process of its own is spawned.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { cliPath, createWorkspace, repoRoot, type CliResult, type Workspace, faultyArgs } from '../helpers/workspace.js';

interface RunSummary {
  id: string;
  workflow: string;
  status: string;
  trigger: { type: string };
  startedAt: string;
  endedAt: string | null;
  durationMs?: number;
  dir: string;
}

interface History extends Workspace {
  /** The faulty app's side-effect file (`work` appends to it). */
  counter: string;
  cli(...args: string[]): Promise<CliResult>;
  /** `runs --json` with `args`, parsed; fails the test when it does not exit 0. */
  runs(...args: string[]): Promise<RunSummary[]>;
  /** `run FILE --json`: the record it prints. */
  run(workflowFile: string): Promise<{ code: number | null; record: any; stderr: string }>;
  /** Starts the CLI in the background; the test stops it. */
  start(...args: string[]): Background;
}

interface Background {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

// Processes this file started and has not seen exit: killed after each test, whatever happened.
const live = new Set<ChildProcess>();
afterEach(() => {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  live.clear();
});

/** A workspace with the faulty app, a `broken` one that dies at start, and the given workflow files. */
function historyWorkspace(workflows: Record<string, string>, configYaml = ''): History {
  const ws = createWorkspace('');
  const counter = join(ws.dir, 'counter.txt');
  ws.write(
    'runner.config.yaml',
    [
      'artifacts: artifacts',
      'apps:',
      '  faulty:',
      '    command: node',
      `    args: ${JSON.stringify([...faultyArgs, '--counter', counter])}`,
      '  broken:',
      '    command: node',
      `    args: ${JSON.stringify([...faultyArgs, '--crash-on-start'])}`,
      configYaml,
    ].join('\n'),
  );
  for (const [name, text] of Object.entries(workflows)) ws.write(name, text);
  const cli = (...args: string[]) => runInProcess(['--config', ws.config, ...args], { cwd: ws.dir });
  return {
    ...ws,
    counter,
    cli,
    async runs(...args) {
      const result = await cli('runs', '--json', ...args);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      return JSON.parse(result.stdout);
    },
    async run(workflowFile) {
      const result = await cli('run', join(ws.dir, workflowFile), '--json');
      return { code: result.code, record: result.stdout.startsWith('{') ? JSON.parse(result.stdout) : null, stderr: result.stderr };
    },
    start: (...args) => startNode([cliPath, '--config', ws.config, ...args], ws.dir),
  };
}

/** Starts `node ARGS` in `cwd` in the background, collecting its output. */
function startNode(args: string[], cwd: string): Background {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Polls `check` until it returns something truthy; fails with `what` after `timeoutMs`. */
async function waitFor<T>(check: () => Promise<T | undefined> | T | undefined, what: () => string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await sleep(100);
  }
}

const ids = (runs: RunSummary[]) => runs.map((run) => run.id);
const echo = (name: string) => `name: ${name}\nsteps:\n  - id: hello\n    uses: faulty.echo\n    with: { text: hi }\n`;

describe('runs, runs show and logs', () => {
  const workflows = {
    'alpha.yaml': [
      'name: alpha',
      'inputs:',
      '  n: { type: array, default: [1, 2, 3] }',
      'steps:',
      '  - id: greet',
      '    uses: faulty.echo',
      '    with: { text: hi }',
      '  - id: picture',
      '    uses: faulty.image',
      '  - id: fan',
      '    uses: faulty.echo',
      '    foreach: ${{ inputs.n }}',
      '    with: { text: "n=${{ item }}" }',
      '',
    ].join('\n'),
    'beta.yaml': 'name: beta\nsteps:\n  - id: bad\n    uses: faulty.fail\n    with: { message: nope }\n',
    'crashy.yaml': 'name: crashy\nsteps:\n  - id: first\n    uses: broken.echo\n',
  };
  // One workspace and four runs, shared by the read-only cases below.
  let ws: History;
  const made: { alpha1: any; beta: any; alpha2: any; crashy: any } = {} as any;
  // Newest first, as `runs` lists them (run ids sort by start time).
  let newestFirst: string[] = [];
  const newest = () => [made.alpha1, made.beta, made.alpha2, made.crashy].find((record) => record.id === newestFirst[0]);

  beforeAll(async () => {
    ws = historyWorkspace(workflows);
    // At the same time, to save time; the order comes from the ids.
    [made.alpha1, made.beta, made.alpha2, made.crashy] = (await Promise.all(['alpha.yaml', 'beta.yaml', 'alpha.yaml', 'crashy.yaml'].map((file) => ws.run(file)))).map(
      (run) => run.record,
    );
    newestFirst = [made.alpha1, made.beta, made.alpha2, made.crashy].map((record) => record.id).sort().reverse();
  }, 60_000);

  it('filters by workflow, status, limit and age; rejects bad values naming the flag', async () => {
    expect([made.alpha1.status, made.beta.status, made.alpha2.status, made.crashy.status]).toEqual(['succeeded', 'failed', 'succeeded', 'failed']);
    const all = await ws.runs();
    expect(ids(all)).toEqual(newestFirst);
    expect(all.find((run) => run.id === made.alpha2.id)).toEqual({
      id: made.alpha2.id,
      workflow: 'alpha',
      status: 'succeeded',
      trigger: { type: 'manual' },
      startedAt: made.alpha2.startedAt,
      endedAt: made.alpha2.endedAt,
      durationMs: made.alpha2.durationMs,
      dir: made.alpha2.dir,
    });
    const only = (...records: any[]) => newestFirst.filter((id) => records.some((record) => record.id === id));
    // Read-only queries: asked at the same time, to save time.
    const filtered = await Promise.all(
      [['--workflow', 'alpha'], ['--status', 'failed'], ['--workflow', 'beta', '--status', 'succeeded'], ['--limit', '1'], ['--since', '1h'], ['--since', '7d']].map(
        async (args) => ids(await ws.runs(...args)),
      ),
    );
    expect(filtered).toEqual([only(made.alpha1, made.alpha2), only(made.beta, made.crashy), [], newestFirst.slice(0, 1), newestFirst, newestFirst]);

    const badValues = [
      ['--status', 'nope'],
      ['--limit', '0'],
      ['--since', 'soon'],
    ];
    const bad = await Promise.all(badValues.map((args) => ws.cli('runs', ...args)));
    badValues.forEach(([flag, value], i) => {
      expect(bad[i]!.code, `${flag} ${value}`).toBe(2);
      expect(bad[i]!.stderr).toContain(`\`${flag}\``);
      expect(bad[i]!.stderr).toContain(value);
      expect(bad[i]!.stdout).toBe('');
    });
  });

  it('`runs show`: every step with status and attempts, foreach items, saved files; --json is run.json', async () => {
    const [byPrefix, latest, crashy, ...json] = await Promise.all([
      ws.cli('runs', 'show', made.alpha2.id.slice(0, 22)),
      ws.cli('runs', 'show', 'latest'),
      ws.cli('runs', 'show', made.crashy.id),
      ...[made.alpha2, made.beta].map((run) => ws.cli('runs', 'show', run.id, '--json')),
    ]);
    expect(byPrefix.code).toBe(0);
    const lines = byPrefix.stdout.split('\n');
    expect(lines.find((line) => line.trimStart().startsWith('greet'))).toMatch(/greet\s+succeeded\s+\S+\s+attempts 1$/);
    expect(lines.find((line) => line.trimStart().startsWith('picture'))).toMatch(/picture\s+succeeded\s+\S+\s+attempts 1$/);
    const fan = lines.find((line) => line.trimStart().startsWith('fan'));
    expect(fan).toMatch(/fan\s+succeeded\s+\S+\s+3 items: 3 succeeded$/);
    expect(fan).not.toContain('attempts');
    // Saved files, relative to the run folder, and really there.
    const picture = made.alpha2.steps.find((step: { id: string }) => step.id === 'picture');
    expect(picture.files.length).toBeGreaterThan(0);
    for (const file of picture.files) {
      expect(file.startsWith(made.alpha2.dir + '/')).toBe(true);
      expect(existsSync(file)).toBe(true);
      expect(lines).toContain(`      ${file.slice(made.alpha2.dir.length + 1)}`);
    }
    expect(byPrefix.stdout).toContain('picture/image-0.png');

    expect(latest.code).toBe(0);
    expect(latest.stdout.split('\n')[0]).toContain(`run ${newestFirst[0]} `);
    for (const step of newest().steps) expect(latest.stdout).toMatch(new RegExp(`\\n  ${step.id}\\s+${step.status}\\s`));

    expect(crashy.stdout).toMatch(/first\s+failed\s+\S+\s+attempts \d+\n\s+\[unavailable\]/);

    // --json is the full record, the same as the run.json written for people.
    [made.alpha2, made.beta].forEach((run, i) => {
      expect(json[i]!.code).toBe(0);
      expect(JSON.parse(json[i]!.stdout)).toEqual(JSON.parse(readFileSync(join(run.dir, 'run.json'), 'utf8')));
    });
    expect(JSON.parse(json[1]!.stdout).steps[0]).toMatchObject({ id: 'bad', status: 'failed', attempts: 1, error: { kind: 'tool' } });
  });

  it('`logs ID` prints what the app wrote to stderr; an app the run has no log of exits 2', async () => {
    const all = await ws.cli('logs', made.crashy.id);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain('faulty: boom at startup');
    const one = await ws.cli('logs', made.crashy.id, 'broken');
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('faulty: boom at startup');
    const none = await ws.cli('logs', made.crashy.id, 'nosuchapp');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('nosuchapp');
    expect(none.stdout).toBe('');
  });

  it('`logs ID APP` on a terminal escapes what would steer it and keeps colors; piped, it is the log as written', async () => {
    const written = 'plain \u001b[32mgreen\u001b[0m \u001b[2J\u001b]0;title\u0007 done\n';
    writeFileSync(join(made.crashy.dir, 'logs', 'colors.log'), written);
    const args = ['--config', ws.config, 'logs', made.crashy.id, 'colors'];
    const onTerminal = await runInProcess(args, { cwd: ws.dir, stdoutIsTTY: true });
    expect(onTerminal.stdout).toBe('plain \u001b[32mgreen\u001b[0m \\u001b[2J\\u001b]0;title\\u0007 done\n');
    const piped = await runInProcess(args, { cwd: ws.dir });
    expect(piped.stdout).toBe(written);
  });
});

describe('runs prune', () => {
  it('--dry-run, --keep, never a running run, no policy, `retention:` from the config', { timeout: 60_000 }, async () => {
    const ws = historyWorkspace({
      'alpha.yaml': echo('alpha'),
      'beta.yaml': echo('beta'),
      'slow.yaml': 'name: slow\nsteps:\n  - id: wait\n    uses: faulty.slow\n    with: { ms: 60000 }\n',
    });
    // A run that stays in flight through the prunes below (SIGTERM ends it).
    const slow = ws.start('run', join(ws.dir, 'slow.yaml'));
    // At the same time, to save time; which alpha run is older comes from the ids.
    const [alphaA, alphaB, beta1] = (await Promise.all(['alpha.yaml', 'alpha.yaml', 'beta.yaml'].map((file) => ws.run(file)))).map((run) => run.record);
    const [alpha1, alpha2] = [alphaA, alphaB].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect([alpha1.status, alpha2.status, beta1.status]).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const running = await waitFor(async () => (await ws.runs('--workflow', 'slow', '--status', 'running'))[0], () => 'the slow run to be recorded running');
    const newestFirst = (...records: { id: string }[]) => ids(records as RunSummary[]).sort().reverse();

    const [dry, noPolicy] = await Promise.all([ws.cli('runs', 'prune', '--keep', '1', '--dry-run', '--json'), ws.cli('runs', 'prune')]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, failed: [] });
    expect(ids(JSON.parse(dry.stdout).runs)).toEqual([alpha1.id]);
    expect(existsSync(alpha1.dir)).toBe(true);
    expect(ids(await ws.runs())).toEqual(newestFirst(alpha1, alpha2, beta1, running));
    // No flags and no `retention:` in the config: nothing to prune by.
    expect(noPolicy.code).toBe(2);
    expect(noPolicy.stderr).toContain('retention');

    const kept = await ws.cli('runs', 'prune', '--keep', '1', '--json');
    expect(kept.code).toBe(0);
    expect(ids(JSON.parse(kept.stdout).runs)).toEqual([alpha1.id]);
    expect(existsSync(alpha1.dir)).toBe(false);
    expect(existsSync(alpha2.dir)).toBe(true);
    expect(ids(await ws.runs())).toEqual(newestFirst(alpha2, beta1, running));

    // A run still going in a live process is never pruned, however old the cut-off makes it.
    const pruned = await ws.cli('runs', 'prune', '--older-than', '0s', '--json');
    expect(pruned.code).toBe(0);
    expect(ids(JSON.parse(pruned.stdout).runs).sort()).toEqual([alpha2.id, beta1.id].sort());
    expect(existsSync(alpha2.dir)).toBe(false);
    expect(existsSync(running.dir)).toBe(true);
    expect(await ws.runs()).toEqual([running]);
    expect(slow.child.exitCode).toBe(null); // it was still running all along
    slow.child.kill('SIGTERM');

    const [slowCode, alphaC, alphaD] = await Promise.all([slow.exited, ws.run('alpha.yaml').then((run) => run.record), ws.run('alpha.yaml').then((run) => run.record)]);
    expect(slowCode).toBe(130);
    const [alpha3, alpha4] = [alphaC, alphaD].sort((a, b) => (a.id < b.id ? -1 : 1));
    ws.write('runner.config.yaml', readFileSync(ws.config, 'utf8') + '\nretention: { max-runs: 1 }\n');
    const byConfig = await ws.cli('runs', 'prune');
    expect(byConfig.code).toBe(0);
    expect(byConfig.stdout).toContain(`deleted ${alpha3.id}`);
    expect(byConfig.stdout).not.toContain(running.id);
    const left = await ws.runs();
    expect(ids(left)).toEqual([alpha4.id, running.id]);
    expect(left[1]!.status).toBe('cancelled');
    expect(existsSync(alpha3.dir)).toBe(false);
    expect(existsSync(alpha4.dir)).toBe(true);
  });
});

describe('runs recorded before the run store, and files planted under artifacts', () => {
  it('imports old run folders once, from the folder they are in; never reads run.json again', { timeout: 60_000 }, async () => {
    const ws = historyWorkspace({ 'wf.yaml': echo('wf') });
    // A workflow file outside the config folder that, were it ever run, would leave a side effect.
    const outside = mkdtempSync(join(tmpdir(), 'runner-evil-'));
    const evil = join(outside, 'evil.yaml');
    writeFileSync(evil, 'name: old-wf\nsteps:\n  - id: a\n    uses: faulty.work\n    with: { label: evil }\n');
    const at = '2025-01-01T00:00:00.000Z';
    const oldId = '20250101-000000-000-abcd';
    const oldRecord = {
      id: oldId,
      workflow: 'old-wf',
      status: 'failed',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: at,
      endedAt: '2025-01-01T00:00:01.000Z',
      dir: '/etc',
      workflowFile: evil,
      apps: {},
      steps: [
        { id: 'a', uses: 'faulty.echo', status: 'failed', attempts: 1, startedAt: at, endedAt: at, args: null, outputs: null, text: '', files: [], policy: 'allow', error: { kind: 'tool', message: 'x' }, history: [] },
      ],
    };
    const oldDir = join(ws.artifacts, 'old-wf', oldId);
    ws.write(join('artifacts', 'old-wf', oldId, 'run.json'), JSON.stringify(oldRecord, null, 2));
    ws.write(join('artifacts', 'wf', '20250101-000000-001-beef', 'run.json'), '{}');
    ws.write(join('artifacts', 'wf', '20250101-000000-002-cafe', 'run.json'), 'not json');

    const imported = await ws.runs();
    // The planted `{}` and `not json` are skipped; the old record's own `dir` is not believed.
    expect(imported).toHaveLength(1);
    expect(imported[0]).toMatchObject({ id: oldId, workflow: 'old-wf', status: 'failed', trigger: { type: 'manual' }, startedAt: at, endedAt: oldRecord.endedAt, dir: oldDir });

    // After the import, the store alone says what runs there are: a run folder planted now is not one.
    ws.write(join('artifacts', 'wf', '20250102-000000-000-dead', 'run.json'), JSON.stringify({ ...oldRecord, id: '20250102-000000-000-dead', workflow: 'wf', dir: undefined }));
    const [resumed, real] = await Promise.all([ws.cli('resume', oldId), ws.run('wf.yaml').then((run) => run.record)]);
    // Its workflow file came from a run.json, and is outside the config folder: not trusted, not run.
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain(oldId);
    expect(existsSync(ws.counter)).toBe(false); // the evil workflow never ran
    expect(real.status).toBe('succeeded');
    expect(ids(await ws.runs())).toEqual([real.id, oldId]);

    // Garbage written over run.json files changes nothing the store says.
    const before = JSON.parse(readFileSync(join(real.dir, 'run.json'), 'utf8'));
    writeFileSync(join(real.dir, 'run.json'), 'garbage {');
    writeFileSync(join(oldDir, 'run.json'), JSON.stringify({ ...oldRecord, status: 'succeeded', dir: '/etc' }));
    const [after, old, listed] = await Promise.all([ws.cli('runs', 'show', real.id, '--json'), ws.cli('runs', 'show', oldId, '--json'), ws.runs()]);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toEqual(before);
    expect(JSON.parse(old.stdout)).toMatchObject({ id: oldId, status: 'failed', dir: oldDir, steps: [{ id: 'a', status: 'failed' }] });
    expect(ids(listed)).toEqual([real.id, oldId]);
  });
});

describe('several processes on one artifacts folder', () => {
  it('two runs at once and `runs --json` in a loop: no busy errors, both recorded', { timeout: 60_000 }, async () => {
    const steps = Array.from({ length: 10 }, (_, i) => `  - id: s${i}\n    uses: faulty.echo\n    with: { text: "step ${i}" }\n${i > 0 ? `    needs: [s${i - 1}]\n` : ''}`);
    const ws = historyWorkspace({ 'chain.yaml': `name: chain\nsteps:\n${steps.join('')}` });
    const runs = [ws.start('run', join(ws.dir, 'chain.yaml'), '--json'), ws.start('run', join(ws.dir, 'chain.yaml'), '--json')];
    const done = Promise.all(runs.map((run) => run.exited));
    let running = true;
    void done.then(() => (running = false));
    const listings: CliResult[] = [];
    while (running) listings.push(await ws.cli('runs', '--json'));

    expect(await done).toEqual([0, 0]);
    const busy = /SQLITE_BUSY|database is locked/i;
    for (const run of runs) expect(run.stderr()).not.toMatch(busy);
    expect(listings.length).toBeGreaterThan(0);
    for (const listing of listings) {
      expect(listing.stderr).not.toMatch(busy);
      expect(listing.code).toBe(0);
      expect(Array.isArray(JSON.parse(listing.stdout))).toBe(true);
    }
    const records = runs.map((run) => JSON.parse(run.stdout()));
    expect(records.map((record) => record.status)).toEqual(['succeeded', 'succeeded']);
    const listed = await ws.runs();
    expect(ids(listed).sort()).toEqual(records.map((record) => record.id).sort());
    expect(listed.every((run) => run.status === 'succeeded')).toBe(true);
  });
});

describe('`retention:` under serve', () => {
  it('keeps at most max-runs (+1 in flight) of a workflow and deletes the folders of the others', { timeout: 60_000 }, async () => {
    // A watched folder, one file at a time: each run is triggered as soon as the one before has finished.
    const ws = historyWorkspace(
      { 'workflows/tick.yaml': 'name: tick\non:\n  watch:\n    paths: ["inbox/*.txt"]\n    debounce: 20ms\nsteps:\n  - id: hello\n    uses: faulty.echo\n    with: { text: tick }\n' },
      'retention: { max-runs: 2 }\n',
    );
    mkdirSync(join(ws.dir, 'inbox'));
    const serve = ws.start('serve', '--json');
    const events = () =>
      serve
        .stdout()
        .split('\n')
        .slice(0, -1) // the last line may be unfinished
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line));
    const finished = () => events().filter((event) => event.type === 'run-finished');
    await waitFor(() => events().some((event) => event.type === 'ready'), () => `serve to be ready; stderr:\n${serve.stderr()}`);
    for (let count = 1; count <= 4; count++) {
      writeFileSync(join(ws.dir, 'inbox', `f${count}.txt`), `file ${count}\n`);
      await waitFor(() => finished().length >= count, () => `${count} finished runs; stderr:\n${serve.stderr()}`);
    }
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);

    const runs = finished();
    expect(runs.every((event) => event.workflow === 'tick' && event.status === 'succeeded')).toBe(true);
    const remaining = await ws.runs('--workflow', 'tick');
    expect(remaining.length).toBeGreaterThanOrEqual(2);
    expect(remaining.length).toBeLessThanOrEqual(3);
    for (const run of remaining) expect(existsSync(run.dir)).toBe(true);
    const gone = runs.filter((event) => !ids(remaining).includes(event.runId));
    expect(gone.length).toBeGreaterThanOrEqual(runs.length - 3);
    for (const event of gone) expect(existsSync(event.dir), event.dir).toBe(false);
    const folders = readdirSync(join(ws.artifacts, 'tick')).filter((name) => /^\d{8}-\d{6}-\d{3}-[0-9a-f]{4}$/.test(name));
    expect(folders.sort()).toEqual(ids(remaining).sort());
  });
});

describe('the programmatic API (package `runner`)', () => {
  it('loadConfig, runOnce and withRunStore from an ESM script that imports the package by name', async () => {
    const ws = historyWorkspace({ 'once.yaml': echo('once') });
    mkdirSync(join(ws.dir, 'node_modules'));
    symlinkSync(repoRoot, join(ws.dir, 'node_modules', 'runner'), 'dir');
    ws.write(
      'script.mjs',
      [
        "const api = await import('runner');",
        'const cwd = process.cwd();',
        'const config = await api.loadConfig({ cwd, env: process.env });',
        "const record = await api.runOnce({ workflowPath: 'once.yaml', cwd, env: process.env, policy: { yes: false, allow: [] } });",
        'const listed = await api.withRunStore(config.artifacts, (s) => s.listRuns());',
        'console.log(JSON.stringify({ artifacts: config.artifacts, status: record.status, id: record.id, text: record.steps[0].text, listed: listed.map((run) => run.id) }));',
        '',
      ].join('\n'),
    );
    const script = startNode(['script.mjs'], ws.dir);
    expect({ code: await script.exited, stderr: script.stderr() }).toEqual({ code: 0, stderr: '' });
    const printed = JSON.parse(script.stdout());
    expect(printed).toMatchObject({ artifacts: ws.artifacts, status: 'succeeded', text: 'hi' });
    expect(printed.listed).toEqual([printed.id]);
    expect(ids(await ws.runs())).toEqual([printed.id]);
  });
});
