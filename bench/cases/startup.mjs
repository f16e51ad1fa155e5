// (c) A one-step workflow, process start to exit: `node dist/cli/main.js run`
// with a warm verdict cache, against a raw script process that spawns the same
// modern-era (2026-07-28) app, connects with a cached `prior`, calls once, exits.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, round, say, verdict } from '../lib/stats.mjs';
import { timeNodeProcess } from '../lib/time-process.mjs';
import { cliPath, createWorkspace } from '../lib/workspace.mjs';
import { connectRaw, verdictOf } from '../raw-client.mjs';

// The target: runner/raw at most 1.20.
export const STARTUP_TARGET = 1.2;

const rawScript = fileURLToPath(new URL('../raw-one-call.mjs', import.meta.url));
const countingApp = fileURLToPath(new URL('../apps/counting-app.mjs', import.meta.url));


function countLines(file) {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

export async function benchStartup({ reps, sides }) {
  const runs = Math.max(reps, 10);
  const workspace = createWorkspace({ concurrency: 8 });
  const spawnLog = join(workspace.dir, 'spawns.log');
  // Both sides launch the same app: the counting wrapper around faulty.js (modern era).
  const app = { command: process.execPath, args: [countingApp, spawnLog] };
  writeFileSync(
    join(workspace.dir, 'runner.config.yaml'),
    `artifacts: artifacts\napps:\n  faulty:\n    command: ${JSON.stringify(app.command)}\n    args: ${JSON.stringify(app.args)}\npolicy: { read-only: allow }\n`,
  );
  const workflowFile = workspace.write('one-step.yaml', 'name: one-step\nsteps:\n  - id: hello\n    uses: faulty.echo\n    with: { text: hello }\n');
  const runnerArgs = [cliPath, 'run', workflowFile];
  const priorFile = join(workspace.dir, 'prior.json');
  try {
    // Warm both caches (untimed): the runner's verdicts.json, and the raw script's prior.
    const probe = await connectRaw(app);
    const prior = verdictOf(probe);
    await probe.close();
    if (prior.kind !== 'modern') throw new Error(`expected a modern-era app, got ${prior.kind}`);
    writeFileSync(priorFile, JSON.stringify(prior));
    await timeNodeProcess(runnerArgs, workspace.dir);
    const verdicts = JSON.parse(readFileSync(join(workspace.artifacts, '.runner', 'verdicts.json'), 'utf8'));
    const cached = Object.values(verdicts).map((entry) => entry.prior.kind);
    const rawArgs = [rawScript, priorFile, app.command, ...app.args];
    await timeNodeProcess(rawArgs, workspace.dir);

    const times = { runner: [], raw: [], node: [] };
    const spawns = { runner: 0, raw: 0 };
    for (let rep = 0; rep < runs; rep++) {
      const order = rep % 2 === 0 ? ['raw', 'runner', 'node'] : ['node', 'runner', 'raw'];
      for (const side of order) {
        if (side !== 'node' && !sides[side]) continue;
        const before = countLines(spawnLog);
        const args = side === 'runner' ? runnerArgs : side === 'raw' ? rawArgs : ['-e', '0'];
        times[side].push((await timeNodeProcess(args, workspace.dir)).ms);
        if (side !== 'node') spawns[side] += countLines(spawnLog) - before;
      }
    }
    const runnerMs = median(times.runner);
    const rawMs = median(times.raw);
    const ratio = round(runnerMs / rawMs, 3);
    const check = verdict(ratio, STARTUP_TARGET, 'max');
    const result = {
      runs,
      runnerMs: round(runnerMs, 1),
      rawMs: round(rawMs, 1),
      ratio,
      target: STARTUP_TARGET,
      met: check.met,
      nodeStartMs: round(median(times.node), 1),
      appSpawnsPerRun: { runner: round(spawns.runner / runs, 2), raw: round(spawns.raw / runs, 2) },
      cachedVerdicts: cached,
      runnerRunsMs: times.runner.map((ms) => round(ms, 1)),
      rawRunsMs: times.raw.map((ms) => round(ms, 1)),
    };
    say(`(c) one-step run, process start to exit (${runs} runs each): runner ${result.runnerMs} ms, raw script ${result.rawMs} ms, runner/raw ${ratio} (${check.text})`);
    say(`    bare \`node -e 0\` ${result.nodeStartMs} ms; app processes per run: runner ${result.appSpawnsPerRun.runner}, raw ${result.appSpawnsPerRun.raw}; cached verdict: ${cached.join(', ')}`);
    return result;
  } finally {
    workspace.remove();
  }
}
