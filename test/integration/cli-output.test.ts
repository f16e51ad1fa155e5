import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { cliPath, createWorkspace, runCli, faultyArgs } from '../helpers/workspace.js';

// What the runner's own process prints: stdout that closes early (`runner runs | head -2`)
// and stdout that must hold one JSON document under --json. Those need the real process and
// its real stdout; what only makes a history or reads the progress text runs in this process.

/** A workspace whose one app is the faulty fixture, launched with `appFlags`, and one workflow calling it. */
function faultyWorkspace(appFlags: string[] = [], workflow = 'name: wf\nsteps:\n  - id: a\n    uses: faulty.echo\n    with: { text: hello }\n') {
  const ws = createWorkspace('');
  const counter = join(ws.dir, 'counter.txt');
  const pidFile = join(ws.dir, 'app-pids.txt');
  const args = [...faultyArgs, '--counter', counter, '--pid-file', pidFile, ...appFlags];
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(args)}\n`);
  const readLines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
  return { ws, workflow: ws.write('wf.yaml', workflow), counterLines: () => readLines(counter), appPids: () => readLines(pidFile).map(Number) };
}

/** Starts the real CLI and at once closes the read end of its stdout (and stderr, if asked), as `| head` does once satisfied. */
function spawnWithClosedOutput(args: string[], options: { cwd: string; closeStderr?: boolean }) {
  const child = spawn(process.execPath, [cliPath, ...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  if (options.closeStderr) child.stderr.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code))).finally(() => clearTimeout(timer));
  return { child, exited, stderr: () => stderr };
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// Each test has its own workspace and processes, and part of each is waiting on them: they run at once.
describe.concurrent('cli output', () => {
  describe('a reader that closes stdout early', () => {
    it('ends a one-shot command quietly: no EPIPE, no stack trace, exit 0', async ({ expect }) => {
      const { ws, workflow } = faultyWorkspace();
      const run = await runInProcess(['--config', ws.config, 'run', workflow], { cwd: ws.dir });
      expect(run.code, run.stderr).toBe(0);

      for (const args of [['runs'], ['runs', '--json'], ['--help'], ['tools', '--json']]) {
        const cli = spawnWithClosedOutput(['--config', ws.config, ...args], { cwd: ws.dir });
        const code = await cli.exited;
        expect(cli.stderr(), args.join(' ')).not.toMatch(/EPIPE|\n\s+at /);
        expect(code, args.join(' ')).toBe(0);
      }
    });

    it('does not crash when stderr is closed too', async ({ expect }) => {
      const ws = createWorkspace('');
      // An empty history: `runner runs` says so on stderr.
      const cli = spawnWithClosedOutput(['--config', ws.config, 'runs'], { cwd: ws.dir, closeStderr: true });
      expect(await cli.exited).toBe(0);
    });

    it('keeps a long-running command serving, and it still closes its apps when stopped', async ({ expect }) => {
      const { ws, counterLines, appPids } = faultyWorkspace(
        [],
        'name: tick\non:\n  schedule:\n    - cron: "* * * * * *"\nsteps:\n  - id: work\n    uses: faulty.work\n    with: { label: tick }\n',
      );
      const serve = spawnWithClosedOutput(['--config', ws.config, 'serve', 'wf.yaml', '--json'], { cwd: ws.dir });
      // Two runs after stdout closed: the events they would have printed did not stop the service.
      while (counterLines().length < 2 && serve.child.exitCode === null) await sleep(50);
      expect(serve.child.exitCode).toBeNull();
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(serve.stderr()).not.toMatch(/EPIPE|\n\s+at /);
      expect(appPids().length).toBeGreaterThan(0);
      expect(appPids().filter(isAlive)).toEqual([]);
    });
  });

  describe('--json stdout', () => {
    it('holds exactly one JSON document although the app writes junk on its own stdout', async ({ expect }) => {
      const { ws, workflow } = faultyWorkspace(['--junk-stdout']);
      const result = await runCli(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
      expect(result.code).toBe(0);
      const record = JSON.parse(result.stdout);
      expect(record.status).toBe('succeeded');
      expect(record.steps[0].text).toBe('hello');
    });

    it('holds exactly one JSON document although something in the process logs through the console', async ({ expect }) => {
      const { ws, workflow } = faultyWorkspace();
      // Stands in for a library that logs; at exit, so it runs after the CLI has set up its console, whatever the timing.
      const noisy = ws.write(
        'noisy.mjs',
        "process.on('exit', () => { console.log('noise from log'); console.info('noise from info'); console.debug('noise from debug'); console.warn('noise from warn'); });\n",
      );
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', noisy, cliPath, '--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk) => (stdout += chunk));
        child.stderr.on('data', (chunk) => (stderr += chunk));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).status).toBe('succeeded');
      for (const method of ['log', 'info', 'debug', 'warn']) expect(result.stderr).toContain(`noise from ${method}`);
    });
  });

  describe('progress without a terminal', () => {
    it('says queued until a call is sent, prints app progress, counts foreach items instead of listing them, and ends naming the outputs', async ({ expect }) => {
      const ws = createWorkspace(`apps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n    concurrency: 1\n`);
      const workflow = ws.write(
        'wf.yaml',
        [
          'name: wf',
          'steps:',
          '  - id: busy',
          '    uses: faulty.slow',
          '    with: { ms: 1200, progressEveryMs: 100 }',
          '  - id: next', // no needs: ready at once, but the app takes one call at a time
          '    uses: faulty.echo',
          '    with: { text: hi }',
          '  - id: each',
          '    needs: [busy, next]',
          '    uses: faulty.echo',
          '    foreach: [1, 2, 3, 4, 5, 6]',
          '    with: { text: "n${{ item }}" }',
          '',
        ].join('\n'),
      );
      const { code, stderr } = await runInProcess(['--config', ws.config, 'run', workflow], { cwd: ws.dir });
      expect(code).toBe(0);
      const lines = stderr.trimEnd().split('\n');
      const at = (line: string) => lines.indexOf(line);
      // `next` waits for the app's one slot while `busy` runs: queued, and running only once `busy` is done.
      expect(at('◌ next queued')).toBeGreaterThan(-1);
      const progressLine = lines.findIndex((line) => line.startsWith('… busy '));
      expect(progressLine).toBeGreaterThan(at('▶ busy running'));
      expect(at('▶ next running')).toBeGreaterThan(progressLine); // sent only after busy's call returned, long after its first progress
      expect(lines.filter((line) => line.startsWith('… busy '))).toHaveLength(1); // at most one progress line per step every 5 s
      expect(lines.find((line) => line.startsWith('… busy '))).toMatch(/^… busy \d+\/1200 \(\d+%\) \d+ of 1200 ms$/);
      expect(lines.filter((line) => line.includes('each['))).toEqual([]); // items that succeed are counted, not listed
      expect(lines).toContain('✔ each succeeded (6/6 items done: 6 succeeded)');
      const dir = lines[0]!.split(' → ')[1];
      expect(lines.at(-1)).toMatch(new RegExp(`^run \\S+ succeeded in \\S+: 3 succeeded; no files saved, outputs in ${dir!.replaceAll('/', '\\/')}$`));
    });
  });
});
