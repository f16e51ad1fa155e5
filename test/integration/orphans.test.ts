import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { isAlive, listDescendants } from '../../src/apps/process-tree.js';
import { REAPER_SCRIPT } from '../../src/apps/reaper-script.js';
import { readProcessStart, readProcessStat } from '../../src/process-info.js';
import { cliPath, createWorkspace, repoRoot, faultyArgs } from '../helpers/workspace.js';

const POLL_EVERY_MS = 50;

/** Kills `pids` and their groups with SIGKILL: what a test leaves running when it fails. */
function killAll(pids: number[]): void {
  for (const pid of pids.splice(0)) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // Already gone, as it should be.
      }
    }
  }
}

/** A list of pids the test's end kills, whatever happened (each test has its own: they run at once). */
function leftoversOf(onTestFinished: (fn: () => void) => void): number[] {
  const leftovers: number[] = [];
  onTestFinished(() => killAll(leftovers));
  return leftovers;
}

/** A workspace whose faulty app, started with `flags`, writes its pid to a file. */
function workspace(steps: string, flags: string[]) {
  const ws = createWorkspace('');
  const pidFile = join(ws.dir, 'app.pid');
  const args = [...faultyArgs, ...flags, '--pid-file', pidFile];
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(args)}\n`);
  const workflow = ws.write('wf.yaml', `name: wf\nsteps:\n${steps}`);
  return { ws, workflow, pidFile };
}

function startRunner(ws: { dir: string; config: string }, workflow: string, leftovers: number[]): { runner: ChildProcess; exited: Promise<number | null> } {
  const runner = spawn(process.execPath, [cliPath, '--config', ws.config, 'run', workflow], { cwd: ws.dir, stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => runner.on('exit', (code) => resolve(code)));
  leftovers.push(runner.pid!);
  return { runner, exited };
}

/** Polls every 50 ms until `read` returns a value, up to `limitMs`; undefined if it never does. */
async function pollFor<T>(read: () => T | undefined, limitMs: number): Promise<T | undefined> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = read();
    if (value !== undefined || Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
  }
}

function readAppPid(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  return pid > 0 ? pid : undefined;
}

/** The runner's reaper process, found among its children by command line (`/bin/sh -c SCRIPT runner-reaper`). */
function findReaper(runnerPid: number): number | undefined {
  return listDescendants(runnerPid).find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('runner-reaper');
    } catch {
      return false;
    }
  });
}

/**
 * The ways the reaper runs: the shell script runner starts (which reads /proc with awk), the same
 * script on a PATH with `sleep` alone (it reads /proc itself), and the Node program runner starts
 * where there is no /bin/sh.
 */
const REAPERS = [
  { name: 'the shell script', command: '/bin/sh', args: ['-c', REAPER_SCRIPT, 'runner-reaper'], withoutAwk: false },
  { name: 'the shell script without awk', command: '/bin/sh', args: ['-c', REAPER_SCRIPT, 'runner-reaper'], withoutAwk: true },
  { name: 'the Node program', command: process.execPath, args: [join(repoRoot, 'dist', 'apps', 'reaper-main.js')], withoutAwk: false },
];

/** The environment a reaper starts with: the runner's PATH, or a folder with only `sleep` in it. */
function reaperEnv(withoutAwk: boolean): NodeJS.ProcessEnv {
  if (!withoutAwk) return { PATH: process.env.PATH };
  const bin = mkdtempSync(join(tmpdir(), 'runner-reaper-path-'));
  symlinkSync(['/usr/bin/sleep', '/bin/sleep'].find((file) => existsSync(file))!, join(bin, 'sleep'));
  return { PATH: bin };
}

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

// The tests mostly wait (for the reaper, for a run to end) and share nothing: they run at once.
describe.runIf(process.platform === 'linux').concurrent('apps of a runner that dies', () => {
  it('are killed within seconds of a kill -9, even one ignoring SIGTERM and stdin closing', async ({ expect, onTestFinished }) => {
    const leftovers = leftoversOf(onTestFinished);
    const { ws, workflow, pidFile } = workspace('  - id: a\n    uses: faulty.hang\n', ['--ignore-sigterm', '--ignore-stdin-close']);
    const { runner, exited } = startRunner(ws, workflow, leftovers);
    const appPid = await pollFor(() => readAppPid(pidFile), 10_000);
    expect(appPid).toBeDefined();
    leftovers.push(appPid!);
    const reaperPid = await pollFor(() => findReaper(runner.pid!), 5_000);
    expect(reaperPid).toBeDefined();
    leftovers.push(reaperPid!);

    runner.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    await pollFor(() => (isAlive(appPid!) ? undefined : true), 10_000);
    const deadAfterMs = Date.now() - killedAt;
    // Dead is not yet gone: the orphaned app is a zombie until init reaps it.
    await pollFor(() => (isGone(appPid!) ? true : undefined), 10_000);
    console.log(`app dead ${deadAfterMs} ms, gone ${Date.now() - killedAt} ms after kill -9 of the runner`);
    expect(() => process.kill(appPid!, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(await pollFor(() => (isAlive(reaperPid!) ? undefined : true), 5_000)).toBe(true);
  });

  it('leaves no reaper behind after a normal run', async ({ expect, onTestFinished }) => {
    const leftovers = leftoversOf(onTestFinished);
    const { ws, workflow, pidFile } = workspace('  - id: a\n    uses: faulty.slow\n    with: { ms: 500 }\n', []);
    const { runner, exited } = startRunner(ws, workflow, leftovers);
    const appPid = await pollFor(() => readAppPid(pidFile), 10_000);
    leftovers.push(appPid!);
    const reaperPid = await pollFor(() => findReaper(runner.pid!), 5_000);
    expect(reaperPid).toBeDefined();
    leftovers.push(reaperPid!);

    // The reaper and its pipe do not keep the runner alive: it exits as soon as the run ends.
    expect(await exited).toBe(0);
    expect(await pollFor(() => (isAlive(reaperPid!) ? undefined : true), 3_000)).toBe(true);
    expect(isAlive(appPid!)).toBe(false);
  });

  it.for(REAPERS)('never signals a group whose leader is another process than the one tracked (a reused pid): $name', async ({ command, args, withoutAwk }, { expect, onTestFinished }) => {
    const leftovers = leftoversOf(onTestFinished);
    const victim = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { detached: true, stdio: 'ignore' });
    leftovers.push(victim.pid!);
    const start = await pollFor(() => readProcessStart(victim.pid!) ?? undefined, 5_000);
    const reap = (line: string) => {
      const reaper = spawn(command, args, { stdio: ['pipe', 'ignore', 'ignore'], env: reaperEnv(withoutAwk) });
      reaper.stdin.end(line);
      return new Promise((resolve) => reaper.on('exit', resolve));
    };

    await reap(`track ${victim.pid} ${Number(start) + 1}\n`);
    expect(isAlive(victim.pid!)).toBe(true);
    await reap(`track ${victim.pid} ${start}\n`);
    expect(await pollFor(() => (isAlive(victim.pid!) ? undefined : true), 5_000)).toBe(true);
  });

  it.for(REAPERS)('kills a group that ignores SIGTERM, and a child that left it, after the grace; untracked groups and bad lines are left alone: $name', async ({ command, args, withoutAwk }, { expect, onTestFinished }) => {
    const leftovers = leftoversOf(onTestFinished);
    const dir = createWorkspace('').dir;
    const strayFile = join(dir, 'stray.pid');
    // A leader that ignores SIGTERM, with a child that left its group (setsid) and ignores SIGTERM too.
    // The child writes its pid itself, once it is in its own session and ignores SIGTERM.
    const stubborn = `process.on('SIGTERM', () => {}); setInterval(() => {}, 1e9);`;
    const strayCode = `${stubborn} require('fs').writeFileSync(${JSON.stringify(strayFile)}, String(process.pid));`;
    const leader = spawn(
      process.execPath,
      ['-e', `${stubborn} require('child_process').spawn('setsid', [process.execPath, '-e', ${JSON.stringify(strayCode)}], { stdio: 'ignore' });`],
      { detached: true, stdio: 'ignore' },
    );
    const untracked = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { detached: true, stdio: 'ignore' });
    leftovers.push(leader.pid!, untracked.pid!);
    const stray = await pollFor(() => (existsSync(strayFile) ? Number(readFileSync(strayFile, 'utf8')) || undefined : undefined), 5_000);
    expect(stray).toBeDefined();
    leftovers.push(stray!);
    // The stray descends from the leader but has left its group: signalling the group alone would miss it.
    expect(await pollFor(() => (listDescendants(leader.pid!).includes(stray!) ? true : undefined), 5_000)).toBe(true);
    expect(Number(readProcessStat(stray!)?.[2])).not.toBe(leader.pid);

    const reaper = spawn(command, args, { stdio: ['pipe', 'ignore', 'ignore'], env: reaperEnv(withoutAwk) });
    const exited = new Promise((resolve) => reaper.on('exit', resolve));
    const started = Date.now();
    reaper.stdin.end(
      [
        `track ${leader.pid} ${readProcessStart(leader.pid!)}`,
        `track ${untracked.pid} ${readProcessStart(untracked.pid!)}`,
        `untrack ${untracked.pid}`,
        'track 1 1',
        'track x y',
        `track ${untracked.pid}0 *`,
        '',
      ].join('\n'),
    );
    await exited;
    // SIGTERM, a second of grace, then SIGKILL: not at once.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    // A process is dead a moment after the SIGKILL that the reaper sent just before it exited.
    expect(await pollFor(() => (isAlive(leader.pid!) ? undefined : true), 5_000)).toBe(true);
    expect(await pollFor(() => (isAlive(stray!) ? undefined : true), 5_000)).toBe(true);
    expect(isAlive(untracked.pid!)).toBe(true);
  });
});
