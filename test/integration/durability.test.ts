import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, it } from 'vitest';
import { startServe } from '../helpers/serve.js';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, type Workspace, faultyArgs } from '../helpers/workspace.js';

// What the run store promises, through the CLI: secrets never stored and
// never lost on resume, short secrets that cannot break the record, foreach
// items kept across resumes, write failures that fail the run instead of the
// runner, and a watch-triggered run that survives kill -9 of its runner.

function faultyWorkspace(extraConfig = ''): Workspace & { counter: string; lines: () => string[] } {
  const ws = createWorkspace('');
  const counter = join(ws.dir, 'counter.txt');
  ws.write(
    'runner.config.yaml',
    `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify([...faultyArgs, '--counter', counter, '--state', join(ws.dir, 'state')])}\n${extraConfig}`,
  );
  const lines = () => (existsSync(counter) ? readFileSync(counter, 'utf8').split('\n').filter(Boolean) : []);
  return { ...ws, counter, lines };
}

/**
 * Steps `first`, `wait`, `last`: `wait` runs until the test writes `gate`, so a run killed meanwhile is surely
 * cut off mid-step. `label` gives the work steps' labels (the side effects the test counts).
 */
function gatedChain(gate: string, label: (id: string) => string = (id) => id): string[] {
  return [
    'steps:',
    '  - id: first',
    '    uses: faulty.work',
    `    with: { label: ${label('first')} }`,
    '  - id: wait',
    '    uses: faulty.gate',
    '    needs: [first]',
    `    with: { path: ${JSON.stringify(gate)} }`,
    '  - id: last',
    '    uses: faulty.work',
    '    needs: [wait]',
    `    with: { label: ${label('last')} }`,
    '',
  ];
}

async function cli(ws: Workspace, args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = await runInProcess(['--config', ws.config, ...args], { cwd: ws.dir, env });
  return { ...result, record: result.stdout.startsWith('{') ? JSON.parse(result.stdout) : null };
}

/** Every file under `dir`, as text (binary files too: a secret must not be in any byte of them). */
function allText(dir: string): string {
  let text = '';
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) text += readFileSync(join(entry.parentPath, entry.name), 'latin1');
  }
  return text;
}

// Each test has its own workspace and processes, and much of each is waiting on them: they run at once.
describe.concurrent('the run store through the CLI', () => {
  describe('secrets and resume', () => {
    it('stores no secret, shows ***, and gives tools the real value again on resume', async ({ expect }) => {
      const secret = 'tok-"Zq9"\\x';
      const ws = faultyWorkspace('secrets: [API_TOKEN]\n');
      const workflow = ws.write(
        'wf.yaml',
        [
          'name: wf',
          'inputs:',
          '  key: { type: string }',
          'steps:',
          '  - id: a',
          '    uses: faulty.echo',
          '    with: { text: "${{ inputs.key }}" }',
          '  - id: b',
          '    uses: faulty.crash_once',
          '    needs: [a]',
          '  - id: c',
          '    uses: faulty.work',
          '    needs: [b]',
          '    with: { label: "${{ steps.a.outputs.text }}" }',
          '',
        ].join('\n'),
      );
      const env = { API_TOKEN: secret };
      const first = await cli(ws, ['run', workflow, '-i', `key=${secret}`, '--json'], env);
      expect(first.code).toBe(1);
      expect(first.record.steps.map((step: { status: string }) => step.status)).toEqual(['succeeded', 'failed', 'skipped']);
      expect(first.record.inputs.key).toBe('***');
      expect(allText(ws.artifacts)).not.toContain('Zq9');

      const resumed = await cli(ws, ['resume', first.record.id, '--json'], env);
      expect(resumed.code).toBe(0);
      expect(ws.lines()).toEqual([secret]); // the tool got the value, not ***
      expect(resumed.record.steps[2].args).toEqual({ label: '***' });
      expect(allText(ws.artifacts)).not.toContain('Zq9');

      // Without the secret in the environment, resume cannot rebuild the kept value and says so.
      rmSync(join(ws.dir, 'state'), { recursive: true }); // crash_once crashes again
      const rerun = await cli(ws, ['run', workflow, '-i', `key=${secret}`, '--json'], env);
      expect(rerun.record.status).toBe('failed');
      const unset = await cli(ws, ['resume', rerun.record.id], { API_TOKEN: '' });
      expect(unset.code).toBe(2);
      expect(unset.stderr).toContain('API_TOKEN');
    });

    it('short secrets change values only: run ids, statuses and paths stay intact', async ({ expect }) => {
      const ws = faultyWorkspace('secrets: [YEAR, SHORT]\n');
      const workflow = ws.write(
        'wf.yaml',
        'name: wf\nsteps:\n  - id: a\n    uses: faulty.echo\n    with: { text: "2026 succeeded" }\n  - id: b\n    uses: faulty.crash_once\n    needs: [a]\n',
      );
      const env = { YEAR: '2026', SHORT: 'ed' };
      const first = await cli(ws, ['run', workflow, '--json'], env);
      expect(first.record.id).toMatch(/^2026\d{4}-/);
      expect(first.record.status).toBe('failed');
      expect(first.record.steps[0]).toMatchObject({ status: 'succeeded', text: '*** succe***' });
      const onDisk = JSON.parse(readFileSync(join(first.record.dir, 'run.json'), 'utf8'));
      expect(onDisk.id).toBe(first.record.id);
      expect(onDisk.dir).toBe(first.record.dir);

      const shown = await cli(ws, ['runs', 'show', first.record.id], env);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(`run ${first.record.id} failed`);
      const resumed = await cli(ws, ['resume', first.record.id, '--json'], env);
      expect(resumed.code).toBe(0);
      expect(resumed.record.steps.map((step: { status: string }) => step.status)).toEqual(['succeeded', 'succeeded']);
      expect(resumed.record.resumes).toEqual([{ at: expect.any(String), steps: ['b'] }]);
    });
  });

  describe('resume of a foreach step', () => {
    it('keeps the items that succeeded and runs only the rest, with every attempt in its history', async ({ expect }) => {
      const ws = faultyWorkspace();
      const workflow = ws.write(
        'wf.yaml',
        [
          'name: wf',
          'steps:',
          '  - id: each',
          '    uses: faulty.work',
          '    foreach: ["a", "b", "c"]',
          // The step's timeout also covers starting the app, cold in each run: leave room for that on a loaded machine.
          '    timeout: 3s',
          "    with: { label: '${{ item }}', delayMs: \"${{ item == 'b' && fromJSON(env.SLOW_MS) || 0 }}\" }",
          '',
        ].join('\n'),
      );
      const first = await cli(ws, ['run', workflow, '--json'], { SLOW_MS: '8000' });
      expect(first.record.steps[0].items.map((item: { status: string }) => item.status)).toEqual(['succeeded', 'failed', 'succeeded']);
      expect(first.record.steps[0].items[1].error).toMatchObject({ kind: 'timeout', outcome: 'unknown' });

      const kept = await cli(ws, ['resume', first.record.id, '--json'], { SLOW_MS: '0' });
      expect(kept.code).toBe(1); // b's outcome is unknown: not run again without --rerun-unknown
      expect(ws.lines().sort()).toEqual(['a', 'b', 'c']);

      const rerun = await cli(ws, ['resume', first.record.id, '--rerun-unknown', '--json'], { SLOW_MS: '0' });
      expect(rerun.code).toBe(0);
      expect(ws.lines().sort()).toEqual(['a', 'b', 'b', 'c']); // only b again
      const items = rerun.record.steps[0].items;
      expect(items.map((item: { status: string }) => item.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      expect(items[1].history).toHaveLength(2);
      expect(items[0].history).toHaveLength(1);
      expect(rerun.record.resumes.map((resume: { steps: string[] }) => resume.steps)).toEqual([['each'], ['each']]);

      const shown = await cli(ws, ['runs', 'show', first.record.id]);
      expect(shown.stdout).toMatch(/each\s+succeeded.*3 items: 3 succeeded/);
    });
  });

  describe('app timeout', () => {
    it('applies an app\'s `timeout:` when the step sets none, and a step timeout over it', async ({ expect }) => {
      const ws = faultyWorkspace();
      ws.write(
        'runner.config.yaml',
        `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n    timeout: 300ms\n`,
      );
      const workflow = ws.write('wf.yaml', 'name: wf\nsteps:\n  - id: a\n    uses: faulty.hang\n  - id: b\n    uses: faulty.slow\n    with: { ms: 600 }\n    timeout: 5s\n');
      const result = await cli(ws, ['run', workflow, '--json']);
      expect(result.record.steps[0].error).toMatchObject({ kind: 'timeout' });
      expect(result.record.steps[0].error.message).toContain('300ms');
      expect(result.record.steps[1].status).toBe('succeeded');
    });
  });

  describe('write failures', () => {
    const mounts: string[] = [];
    afterEach(() => {
      for (const mount of mounts.splice(0)) execFileSync('umount', ['-l', mount]);
    });

    it('a full disk fails the run with a clear message, keeps what was done, and resume repeats no side effect', async ({ expect }) => {
      // Runs as root (as CI does): a small tmpfs is a disk that really fills up.
      expect(process.getuid?.(), 'this test mounts a tmpfs and needs root').toBe(0);
      const ws = faultyWorkspace();
      mkdirSync(ws.artifacts);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', ws.artifacts]);
      mounts.push(ws.artifacts);
      const gate = join(ws.dir, 'open-b');
      const workflow = ws.write(
        'wf.yaml',
        [
          'name: wf',
          'steps:',
          '  - id: a',
          '    uses: faulty.work',
          '    with: { label: a }',
          // b runs until the test opens its gate, after filling the disk: its outcome is then written to a full disk.
          '  - id: b',
          '    uses: faulty.gate',
          '    needs: [a]',
          `    with: { path: ${JSON.stringify(gate)} }`,
          '  - id: c',
          '    uses: faulty.work',
          '    needs: [b]',
          '    with: { label: c }',
          '',
        ].join('\n'),
      );
      const running = cli(ws, ['run', workflow]);
      // Wait until the store has a's outcome and b is in flight (the counter line alone comes before a's answer).
      while (!(await stepStatuses(ws)).startsWith('succeeded,running')) await sleep(20);
      // Fill the disk to the last byte.
      const filler = join(ws.artifacts, 'filler');
      const { bavail, bsize } = statfsSync(ws.artifacts);
      try {
        writeFileSync(filler, Buffer.alloc(bavail * bsize));
      } catch {
        // ENOSPC while filling is what we want
      }
      writeFileSync(gate, '');
      const first = await running;
      expect(first.code).toBe(1);
      expect(first.stderr).toMatch(/no space left/i);
      expect(first.stderr).not.toMatch(/\n\s+at .*:\d+:\d+\)?\n/); // no stack trace
      expect(ws.lines()).toEqual(['a']);

      rmSync(filler);
      const runs = JSON.parse((await cli(ws, ['runs', '--json'])).stdout);
      expect(runs).toHaveLength(1);
      const resumed = await cli(ws, ['resume', runs[0].id, '--json']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(ws.lines()).toEqual(['a', 'c']); // a was kept, not run again
      for (const entry of readdirSync(ws.artifacts, { recursive: true })) expect(String(entry)).not.toMatch(/\.tmp$/);
    });
  });

  describe('runner watch after kill -9', () => {
    it.for([
      { claim: true, initial: false },
      { claim: false, initial: true }, // the file is still in inbox/: --initial must not start it a second time
    ])('resumes the interrupted run on restart: no trigger lost, no side effect twice (%o)', async ({ claim, initial }, { expect, onTestFinished }) => {
      const ws = faultyWorkspace();
      const gate = join(ws.dir, 'open-wait');
      ws.write(
        'workflows/drop.yaml',
        [
          'name: drop',
          'on:',
          '  watch:',
          '    paths: ["inbox/*.txt"]',
          '    debounce: 100ms',
          ...(claim ? ['    claim: move'] : []),
          ...gatedChain(gate),
        ].join('\n'),
      );
      const watch = startServe(ws, ['watch'], { onTestFinished });
      await watch.until((events) => events.some((event) => event.type === 'ready'), 'ready');
      ws.write('inbox/order.txt', 'order 1');
      await watch.until((events) => events.some((event) => event.type === 'run-started'), 'the run to start');
      const runId = watch.events.find((event) => event.type === 'run-started')!.runId;
      for (let i = 0; i < 200 && !(await stepStatus(ws, runId, 'wait')); i++) await sleep(50);
      expect(await stepStatus(ws, runId, 'wait')).toBe('running');
      await watch.stop('SIGKILL');
      expect(existsSync(join(ws.dir, claim ? 'processing' : 'inbox', 'order.txt'))).toBe(true);
      writeFileSync(gate, '');

      const again = startServe(ws, initial ? ['watch', '--initial'] : ['watch'], { onTestFinished });
      await again.until((events) => events.some((event) => event.type === 'run-finished'), 'the resumed run to finish', 20_000);
      expect(again.events.find((event) => event.type === 'recovered')).toMatchObject({ action: 'resumed', runId });
      expect(again.events.find((event) => event.type === 'run-finished')).toMatchObject({ runId, status: 'succeeded' });
      expect(again.events.filter((event) => event.type === 'trigger' && event.action === 'run')).toEqual([]);
      expect(await again.stop()).toBe(0);
      expect(ws.lines()).toEqual(['first', 'last']);
      if (claim) {
        expect(existsSync(join(ws.dir, 'done', 'order.txt'))).toBe(true);
        expect(readdirSync(join(ws.dir, 'processing'))).toEqual([]);
      }
      const runs = JSON.parse((await cli(ws, ['runs', '--json'])).stdout);
      expect(runs.map((run: { id: string; status: string }) => [run.id, run.status])).toEqual([[runId, 'succeeded']]);
    });
  });

  describe('runner cron after kill -9', () => {
    it('resumes the interrupted occurrence on restart, and runs no occurrence twice', async ({ expect, onTestFinished }) => {
      const ws = faultyWorkspace();
      const gate = join(ws.dir, 'open-wait');
      ws.write(
        'workflows/tick.yaml',
        [
          'name: tick',
          'on:',
          '  schedule:',
          '    - cron: "* * * * * *"',
          '      overlap: skip',
          '      catch-up: none',
          ...gatedChain(gate, (id) => `"${id} \${{ trigger.occurrence }}"`),
        ].join('\n'),
      );
      const cron = startServe(ws, ['cron'], { onTestFinished });
      await cron.until((events) => events.some((event) => event.type === 'run-started'), 'the first occurrence to start', 20_000);
      const runId = cron.events.find((event) => event.type === 'run-started')!.runId;
      for (let i = 0; i < 200 && !(await stepStatus(ws, runId, 'wait')); i++) await sleep(50);
      expect(await stepStatus(ws, runId, 'wait')).toBe('running');
      await cron.stop('SIGKILL');
      writeFileSync(gate, '');

      const again = startServe(ws, ['cron'], { onTestFinished });
      await again.until((events) => events.some((event) => event.type === 'run-finished' && event.runId === runId), 'the interrupted run to finish', 20_000);
      expect(again.events.find((event) => event.type === 'recovered')).toMatchObject({ action: 'resumed', runId });
      expect(again.events.find((event) => event.type === 'run-finished' && event.runId === runId)).toMatchObject({ status: 'succeeded' });
      await again.stop();
      const lines = ws.lines();
      expect(new Set(lines).size).toBe(lines.length); // no occurrence's side effect twice
      const occurrence = lines[0]!.slice('first '.length);
      expect(lines).toContain(`last ${occurrence}`);
    });
  });

  describe('runner watch finds what a dead runner left in processing/', () => {
    const dropWorkflow = [
      'name: drop',
      'on:',
      '  watch:',
      '    paths: ["inbox/*.txt"]',
      '    debounce: 100ms',
      '    claim: move',
      'steps:',
      '  - id: first',
      '    uses: faulty.work',
      '    with: { label: "${{ trigger.path }}" }',
      '',
    ].join('\n');

    it('runs a claimed file whose run never started, and moves on a file whose run had ended', async ({ expect, onTestFinished }) => {
      const ws = faultyWorkspace();
      ws.write('workflows/drop.yaml', dropWorkflow);
      // A runner that died between claiming a file and starting its run: the file in processing/, its content marker held by a dead process.
      const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
      const orphan = ws.write('processing/orphan.txt', 'orphan content');
      const hash = createHash('sha256').update('orphan content').digest('hex');
      ws.write(
        `artifacts/.runner/seen/drop/${hash}`,
        JSON.stringify({ status: 'running', path: join(ws.dir, 'inbox', 'orphan.txt'), pid: dead, host: hostname(), at: new Date().toISOString() }),
      );
      const watch = startServe(ws, ['watch'], { onTestFinished });
      await watch.until((events) => events.some((event) => event.type === 'run-finished'), 'the orphan to run');
      expect(watch.events.find((event) => event.type === 'recovered')).toMatchObject({ action: 'triggered', path: join(ws.dir, 'inbox', 'orphan.txt') });
      expect(watch.events.find((event) => event.type === 'run-finished')).toMatchObject({ status: 'succeeded' });
      expect(await watch.stop()).toBe(0);
      expect(existsSync(orphan)).toBe(false);
      expect(readdirSync(join(ws.dir, 'done'))).toEqual(['orphan.txt']);
      expect(ws.lines()).toEqual([join(ws.dir, 'processing', 'orphan.txt')]);

      // A runner that died after the run ended, before the file left processing/.
      renameSync(join(ws.dir, 'done', 'orphan.txt'), join(ws.dir, 'processing', 'orphan.txt'));
      const again = startServe(ws, ['watch'], { onTestFinished });
      await again.until((events) => events.some((event) => event.type === 'recovered'), 'the file to be released');
      expect(again.events.find((event) => event.type === 'recovered')).toMatchObject({ action: 'released' });
      expect(await again.stop()).toBe(0);
      expect(readdirSync(join(ws.dir, 'processing'))).toEqual([]);
      expect(readdirSync(join(ws.dir, 'done'))).toEqual(['orphan.txt']);
      expect(ws.lines()).toHaveLength(1); // not run again
    });
  });

  /** The latest run's step statuses, comma-separated ('' before there is one). */
  async function stepStatuses(ws: Workspace): Promise<string> {
    const shown = await cli(ws, ['runs', 'show', 'latest', '--json']);
    return shown.code === 0 ? JSON.parse(shown.stdout).steps.map((step: { status: string }) => step.status).join(',') : '';
  }

  async function stepStatus(ws: Workspace, runId: string, stepId: string): Promise<string | undefined> {
    const shown = await cli(ws, ['runs', 'show', runId, '--json']);
    if (shown.code !== 0) return undefined;
    const status = JSON.parse(shown.stdout).steps.find((step: { id: string }) => step.id === stepId)?.status;
    return status === 'running' ? status : undefined;
  }
});
