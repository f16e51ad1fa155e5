// The call journal's promise, checked on the real CLI: SIGKILL the runner at a
// seeded pseudo-random moment, `resume`, and every side effect has happened
// exactly once, or its step says the outcome is unknown; never twice.
// The killed run is a real process (SIGKILL is the point); `resume` and `runs` run in this process,
// as nothing about them needs one and a spawned CLI costs a Node start each.
//
//   npm run test:crash     (60 random kill points; npm test runs 3)
//   CRASH_SEED=<seed of a failed iteration> CRASH_ITERATIONS=1 ...   replays that iteration's
//   workflow and kill point (the moment itself moves with the machine's load)
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { cliPath, createWorkspace, type CliResult, faultyArgs } from '../helpers/workspace.js';

const ITERATIONS = Number(process.env.CRASH_ITERATIONS ?? 3);
const SEED = Number(process.env.CRASH_SEED ?? 20_261_130);
const WORK_LABELS = ['s1', 's2', 's3', 's4', 's5', 's6'];
// Steps left in these after a resume were neither finished nor given up.
const NON_FINAL = new Set(['pending', 'running', 'queued']);

interface StepView {
  id: string;
  uses: string;
  status: string;
  error: { kind: string; message: string; outcome?: string } | null;
}

interface RunView {
  id: string;
  status: string;
  steps: StepView[];
}

/** When, after spawn, a full run of the chain writes its first side effect and exits (measured once). */
interface RunTiming {
  firstEffectMs: number;
  exitMs: number;
}

/** A runner started in the background, killed by the test. */
interface StartedCli {
  child: ChildProcess;
  done: Promise<CliResult>;
}

// Runners this file started and has not seen exit. Each test kills its own when it ends, whatever happened
// (the deterministic cases run at once); what is left when the file ends (the calibration run) goes then.
const live = new Set<ChildProcess>();

afterAll(() => killAll(live));

function killAll(children: Set<ChildProcess>): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
}

/** mulberry32: a small seeded PRNG, so a failing iteration can be replayed. */
function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A workspace with the faulty app, which notes each side effect in counter.txt and its pid in pids.txt.
 * Given the test's `onTestFinished`, the runners it starts are killed when that test ends.
 */
function createCrashWorkspace(steps: string, onTestFinished?: (fn: () => void) => void) {
  const ws = createWorkspace('');
  const started = new Set<ChildProcess>();
  onTestFinished?.(() => killAll(started));
  const counter = join(ws.dir, 'counter.txt');
  const pidFile = join(ws.dir, 'pids.txt');
  const appArgs = [...faultyArgs, '--counter', counter, '--pid-file', pidFile];
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(appArgs)}\n`);
  const workflow = ws.write('wf.yaml', `name: wf\nsteps:\n${steps}`);
  const readLines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
  return {
    ws,
    workflow,
    sideEffects: () => readLines(counter),
    appPids: () => readLines(pidFile).map(Number),
    cli: (args: string[], env: NodeJS.ProcessEnv = {}) => runInProcess(['--config', ws.config, ...args], { cwd: ws.dir, env }),
    start: (args: string[], env: NodeJS.ProcessEnv = {}) => startCli(['--config', ws.config, ...args], ws.dir, env, started),
  };
}

type CrashWorkspace = ReturnType<typeof createCrashWorkspace>;

/** Spawns the real CLI without waiting for it; `done` settles when it exits. */
function startCli(args: string[], cwd: string, env: NodeJS.ProcessEnv, started: Set<ChildProcess>): StartedCli {
  const child = spawn(process.execPath, [cliPath, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  started.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const done = new Promise<CliResult>((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      live.delete(child);
      started.delete(child);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

/** A chain of `work` steps s1..s6 with seeded delays, and read-only `echo` steps between some of them. */
function chainWorkflow(random: () => number): string {
  const lines: string[] = [];
  let previous: string | undefined;
  const add = (id: string, uses: string, args: string) => {
    lines.push(`  - id: ${id}\n    uses: ${uses}\n    with: { ${args} }\n${previous ? `    needs: [${previous}]\n` : ''}`);
    previous = id;
  };
  WORK_LABELS.forEach((label, index) => {
    add(label, 'faulty.work', `label: ${label}, delayMs: ${Math.floor(random() * 31)}`);
    if (index === 1 || index === 3) add(`e${(index + 1) / 2}`, 'faulty.echo', `text: after ${label}`);
  });
  return lines.join('');
}

/** Polls until `check` holds; throws after `timeoutMs`. */
async function waitFor(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Waits until every app process of the workspace has exited. An app outlives
 * a killed runner for a moment (it exits when its stdin closes) and may still
 * act on a call the runner wrote just before it died, so only then is the
 * counter file final. An app spawned just before the kill may not have
 * written its pid yet, so this also waits for every process working in the
 * workspace (an app's working folder is the config's; so is the killed
 * runner's reaper's): once they are gone, nothing writes there any more.
 */
async function waitForAppsToExit(ws: CrashWorkspace): Promise<void> {
  await waitFor('the app processes to exit', () => ws.appPids().every((pid) => !isAlive(pid)));
  await waitForNoProcessIn(ws.ws.dir);
}

function waitForNoProcessIn(dir: string): Promise<void> {
  const real = realpathSync(dir);
  return waitFor(`the processes working in ${dir} to exit`, () => processesIn(real).length === 0);
}

/** The processes whose working folder is `dir` or inside it (Linux: /proc; elsewhere none are found). */
function processesIn(dir: string): number[] {
  if (!existsSync('/proc/self/cwd')) return [];
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) found.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to look at.
    }
  }
  return found;
}

/** Deletes a workspace once no process works in it any more: nothing writes there while it goes. */
async function removeWorkspace(ws: CrashWorkspace): Promise<void> {
  await waitForNoProcessIn(ws.ws.dir);
  rmSync(ws.ws.dir, { recursive: true, force: true });
}

/** Spawns a full run of a chain and notes when its first side effect lands and when it exits. */
async function measureRunTiming(): Promise<RunTiming> {
  const ws = createCrashWorkspace(chainWorkflow(createRandom(SEED)));
  const spawnedAt = Date.now();
  const run = ws.start(['run', ws.workflow, '--json']);
  let firstEffectMs = -1;
  let exited = false;
  void run.done.then(() => (exited = true));
  while (!exited) {
    if (firstEffectMs < 0 && ws.sideEffects().length > 0) firstEffectMs = Date.now() - spawnedAt;
    await sleep(2);
  }
  const exitMs = Date.now() - spawnedAt;
  const result = await run.done;
  if (result.code !== 0) throw new Error(`the calibration run failed (exit ${result.code}):\n${result.stderr}`);
  await waitForAppsToExit(ws);
  await removeWorkspace(ws);
  return { firstEffectMs: Math.max(0, firstEffectMs), exitMs };
}

/** When the runner is killed: `delayMs` after it was spawned, or after the first side effect of its run. */
interface KillPoint {
  after: 'spawn' | 'the first side effect';
  delayMs: number;
}

/**
 * A third of the kills land while the runner starts (loading, connecting,
 * recording the run); the rest are timed from the first side effect, over the
 * steps and past the end. Start-up time swings by a second with the machine's
 * load, the steps' part far less, so timing from it keeps kills among the calls.
 */
function pickKillPoint(random: () => number, timing: RunTiming): KillPoint {
  if (random() < 1 / 3) return { after: 'spawn', delayMs: Math.round(random() * timing.firstEffectMs) };
  const stepsMs = timing.exitMs - timing.firstEffectMs;
  return { after: 'the first side effect', delayMs: Math.round(random() * (stepsMs * 1.5 + 100)) };
}

/** Waits for the kill point; early if the runner exits first. */
async function waitForKillPoint(ws: CrashWorkspace, run: StartedCli, point: KillPoint): Promise<void> {
  if (point.after === 'the first side effect') {
    let exited = false;
    void run.done.then(() => (exited = true));
    await waitFor('the first side effect', () => exited || ws.sideEffects().length > 0, 25_000);
  }
  await sleep(point.delayMs);
}

/** Each way the final record and the counter break the promise (empty: kept). */
function findViolations(record: RunView, sideEffects: string[]): string[] {
  const violations: string[] = [];
  if (record.status === 'running') violations.push('the run is still `running` after the resume');
  const unknownOrSkipped = new Set<string>();
  for (const step of record.steps) {
    const unknown = step.status === 'failed' && step.error?.outcome === 'unknown';
    if (NON_FINAL.has(step.status)) violations.push(`step ${step.id} is left \`${step.status}\``);
    // Everything but an unknown outcome runs again on resume: a step that did not succeed is unknown, or after one.
    const explained = step.status === 'succeeded' || unknown || (step.status === 'skipped' && unknownOrSkipped.size > 0);
    if (!explained) violations.push(`step ${step.id} is \`${step.status}\` (${step.error?.kind ?? 'no error'}: ${step.error?.message ?? ''})`);
    if (unknown || step.status === 'skipped') unknownOrSkipped.add(step.id);
    if (step.uses !== 'faulty.work') continue;
    const count = sideEffects.filter((line) => line === step.id).length;
    const allowed = step.status === 'succeeded' ? [1] : unknown ? [0, 1] : [0];
    if (!allowed.includes(count)) violations.push(`work ${step.id} (${step.status}${unknown ? ', outcome unknown' : ''}) happened ${count} times`);
  }
  const strays = sideEffects.filter((line) => !WORK_LABELS.includes(line));
  if (strays.length > 0) violations.push(`counter lines no step accounts for: ${strays.join(', ')}`);
  return violations;
}

function describeRecord(record: RunView | null): string {
  if (!record) return '(no record)';
  const steps = record.steps.map((step) => {
    const error = step.error ? ` [${step.error.kind}${step.error.outcome ? `, outcome ${step.error.outcome}` : ''}] ${step.error.message}` : '';
    return `  ${step.id}: ${step.status}${error}`;
  });
  return `run ${record.id}: ${record.status}\n${steps.join('\n')}`;
}

function parseJson<T>(result: CliResult, what: string): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`${what} printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}

describe('crash safety: SIGKILL at any moment, then resume', () => {
  let timing: RunTiming;
  // Where the kills landed, by what the store held afterwards: printed once, to show the spread.
  const landed = new Map<string, number>();
  const note = (where: string) => landed.set(where, (landed.get(where) ?? 0) + 1);

  beforeAll(async () => {
    timing = await measureRunTiming();
    console.info(
      `crash-safety: a full run exits ${timing.exitMs} ms after spawn (first side effect at ${timing.firstEffectMs} ms); ` +
        `kills 0–${timing.firstEffectMs} ms after spawn or 0–${Math.round((timing.exitMs - timing.firstEffectMs) * 1.5 + 100)} ms after the first side effect; seeds ${SEED}..${SEED + ITERATIONS - 1}`,
    );
  }, 60_000);

  afterAll(() => {
    console.info(`crash-safety: kills landed ${[...landed].map(([where, count]) => `${where}: ${count}`).join('; ')}`);
  });

  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    const seed = SEED + iteration;
    it(`iteration ${iteration} (CRASH_SEED=${seed} CRASH_ITERATIONS=1 replays it)`, async ({ onTestFinished }) => {
      const random = createRandom(seed);
      const ws = createCrashWorkspace(chainWorkflow(random), onTestFinished);
      const kill = pickKillPoint(random, timing);

      const run = ws.start(['run', ws.workflow, '--json']);
      await waitForKillPoint(ws, run, kill);
      run.child.kill('SIGKILL');
      const ran = await run.done;
      await waitForAppsToExit(ws);

      const runs = parseJson<RunView[]>(await ws.cli(['runs', '--json']), '`runs --json`');
      let resumed: CliResult | null = null;
      let record: RunView | null = null;
      const violations: string[] = [];
      if (runs.length === 0) {
        note('before the run was recorded');
        if (ws.sideEffects().length > 0) violations.push('no run was recorded, yet side effects happened');
      } else {
        const { id, status } = runs[0]!;
        if (ran.signal !== 'SIGKILL') note('after the runner exited');
        else if (status === 'succeeded') note('after the run succeeded');
        resumed = await ws.cli(['resume', id, '--json']);
        const refused = resumed.code === 2 && status === 'succeeded' && resumed.stderr.includes('already succeeded');
        if (!refused && resumed.code !== 0 && resumed.code !== 1) violations.push(`resume exited ${resumed.code}`);
        record = parseJson<RunView>(await ws.cli(['runs', 'show', id, '--json']), '`runs show --json`');
        violations.push(...findViolations(record, ws.sideEffects()));
        if (ran.signal === 'SIGKILL' && status !== 'succeeded') {
          const unknown = record.steps.find((step) => step.error?.outcome === 'unknown');
          const hadEffect = unknown && ws.sideEffects().includes(unknown.id);
          note(!unknown ? 'during the run, no call in flight' : `during a side-effecting call (unknown, ${hadEffect ? 'effect happened' : 'no effect'})`);
        }
        const after = parseJson<RunView[]>(await ws.cli(['runs', '--json']), '`runs --json`');
        if (after.length !== 1) violations.push(`the store holds ${after.length} runs after the resume`);
      }

      const report = [
        `seed ${seed} (iteration ${iteration}), kill ${kill.delayMs} ms after ${kill.after}; the runner ${ran.signal === 'SIGKILL' ? 'was killed' : `had exited ${ran.code}`}`,
        `workspace ${ws.ws.dir}`,
        describeRecord(record),
        `counter: [${ws.sideEffects().join(', ')}]`,
        `run stderr:\n${ran.stderr}`,
        `resume (exit ${resumed?.code ?? '-'}) stderr:\n${resumed?.stderr ?? ''}`,
      ].join('\n');
      expect(violations, report).toEqual([]);
      await removeWorkspace(ws);
    }, 60_000);
  }
});

// Each case has its own workspace and mostly waits on a runner process: they run at once.
describe.concurrent('crash safety: deterministic cases', () => {
  it('a call cut off by SIGKILL is unknown on resume, and runs again only with --rerun-unknown', async ({ expect, onTestFinished }) => {
    // The call waits A_DELAY_MS after its side effect: long in the run that is killed, not at all when resumed.
    const ws = createCrashWorkspace('  - id: a\n    uses: faulty.work\n    with: { label: a, delayMs: "${{ fromJSON(env.A_DELAY_MS) }}" }\n', onTestFinished);
    const run = ws.start(['run', ws.workflow, '--json'], { A_DELAY_MS: '60000' });
    await waitFor('the side effect of a', () => ws.sideEffects().includes('a'));
    run.child.kill('SIGKILL');
    await run.done;
    await waitForAppsToExit(ws);

    const [{ id }] = parseJson<RunView[]>(await ws.cli(['runs', '--json']), '`runs --json`');
    const kept = await ws.cli(['resume', id, '--json'], { A_DELAY_MS: '0' });
    expect(kept.code, kept.stderr).toBe(1);
    const keptRecord = parseJson<RunView>(kept, '`resume --json`');
    expect(keptRecord.steps[0]).toMatchObject({ status: 'failed', error: { outcome: 'unknown' } });
    expect(ws.sideEffects()).toEqual(['a']);

    const rerun = await ws.cli(['resume', id, '--rerun-unknown', '--json'], { A_DELAY_MS: '0' });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(parseJson<RunView>(rerun, '`resume --rerun-unknown --json`').steps[0]!.status).toBe('succeeded');
    expect(ws.sideEffects()).toEqual(['a', 'a']);
    await removeWorkspace(ws);
  });

  it('refuses to resume a run that is still live in another process', async ({ expect, onTestFinished }) => {
    const ws = createCrashWorkspace('  - id: a\n    uses: faulty.work\n    with: { label: a, delayMs: 20000 }\n', onTestFinished);
    const run = ws.start(['run', ws.workflow, '--json']);
    await waitFor('the side effect of a', () => ws.sideEffects().includes('a'));

    const [{ id, status }] = parseJson<RunView[]>(await ws.cli(['runs', '--json']), '`runs --json`');
    expect(status).toBe('running');
    const refused = await ws.cli(['resume', id, '--json']);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('still running');
    expect(ws.sideEffects()).toEqual(['a']);

    run.child.kill('SIGKILL');
    await run.done;
    await waitForAppsToExit(ws);
    expect(ws.sideEffects()).toEqual(['a']);
    await removeWorkspace(ws);
  });
});
