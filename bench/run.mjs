// `npm run bench`: the runner against a raw @modelcontextprotocol/client
// script on the same app in the same run. Human-readable lines as it goes,
// then ONE JSON object with every figure as the last line of stdout.
//
//   node bench/run.mjs [--reps N] [--only a,b,c,d,e,f,g,h,i,j] [--side runner|raw]
//
// --side runs one side only (figures that need both come out as null), for
// profiling: `node --cpu-prof bench/run.mjs --only a --side runner`.
// RUNNER_DIST=DIR measures another build of the runner (default: dist/).
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { benchChain } from './cases/chain.mjs';
import { benchFanout } from './cases/fanout.mjs';
import { benchHistory } from './cases/history.mjs';
import { benchHostile } from './cases/hostile.mjs';
import { benchJournal } from './cases/journal.mjs';
import { benchPlan } from './cases/plan.mjs';
import { benchQueue } from './cases/queue.mjs';
import { benchStartup } from './cases/startup.mjs';
import { benchUi } from './cases/ui.mjs';
import { benchWatch } from './cases/watch.mjs';
import { distDir } from './lib/dist.mjs';
import { repoRoot } from './lib/paths.mjs';
import { probeMachineSpeed } from './lib/speed-probe.mjs';
import { loadAverages, say } from './lib/stats.mjs';

const USAGE = 'Usage: node bench/run.mjs [--reps N] [--only a,b,c,d,e,f,g,h,i,j] [--side runner|raw] (bench/README.md says what each case measures)\n';
let values;
try {
  ({ values } = parseArgs({
    options: {
      reps: { type: 'string', default: '5' },
      only: { type: 'string', default: 'a,b,c,d,e,f,g,h,i,j' },
      side: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  process.stderr.write(`${error.message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const reps = Number(values.reps);
if (!Number.isInteger(reps) || reps < 1) {
  process.stderr.write(`Expected \`--reps\` to be an integer from 1 up, got \`${values.reps}\`\n`);
  process.exit(2);
}
const only = new Set(values.only.split(','));
const CASE_KEYS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
const unknown = [...only].filter((key) => !CASE_KEYS.includes(key));
if (unknown.length > 0 || (values.side !== undefined && !['runner', 'raw'].includes(values.side))) {
  process.stderr.write(`Expected \`--only\` to list some of ${CASE_KEYS.join(', ')} and \`--side\` to be runner or raw, got \`--only ${values.only}\`${values.side ? ` \`--side ${values.side}\`` : ''}\n`);
  process.exit(2);
}
const sides = { runner: values.side !== 'raw', raw: values.side !== 'runner' };

const cases = [
  ['a', 'chain', benchChain],
  ['b', 'fanout', benchFanout],
  ['c', 'startup', benchStartup],
  ['d', 'plan', benchPlan],
  ['e', 'journal', benchJournal],
  ['f', 'history', benchHistory],
  ['g', 'hostile', benchHostile],
  ['h', 'queue', benchQueue],
  ['i', 'ui', benchUi],
  ['j', 'watch', benchWatch],
];

/** The commit measured, marked `+dirty` when src/ has uncommitted changes. */
function describeCommit() {
  try {
    const git = (...args) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', 'src') ? '+dirty' : ''}`;
  } catch {
    return 'unknown';
  }
}

const summary = {
  commit: describeCommit(),
  dist: distDir,
  node: process.version,
  cpus: cpus().length,
  reps,
  loadBefore: loadAverages(),
  speedProbeMsBefore: probeMachineSpeed(),
};
say(`runner benchmarks at ${summary.commit} (${distDir}): node ${process.version}, ${summary.cpus} CPUs, ${reps} timed repetitions per side (medians)`);
say(`load average before: ${summary.loadBefore.join(' ')}; machine speed probe: ${summary.speedProbeMsBefore} ms of CPU (bench/README.md, What is measured)`);
for (const [key, name, bench] of cases) {
  if (!only.has(key)) continue;
  const loadBefore = loadAverages();
  const started = performance.now();
  const figures = await bench({ reps, sides });
  summary[key] = { name, ...figures, seconds: Math.round((performance.now() - started) / 100) / 10, load: { before: loadBefore, after: loadAverages() } };
}
summary.loadAfter = loadAverages();
summary.speedProbeMsAfter = probeMachineSpeed();
summary.targets = {
  ...(summary.a && { aChainRatio: summary.a.delay5ms.met, aOverheadPerStep: summary.a.delay0ms.met }),
  ...(summary.b && { bThroughput: summary.b.foreach.met, bStepsThroughput: summary.b.steps.met }),
  ...(summary.c && { cStartup: summary.c.met }),
  ...(summary.d && { dTime: summary.d.timeMet, dMemory: summary.d.memoryMet }),
  // (e) is a figure with no target: what the journal costs per side-effecting step.
  ...(summary.f && { fHistoryUnder300ms: summary.f.met }),
  // (g): peak RSS of a result at the limit under 4× the limit, and every bound held (timings are figures).
  ...(summary.g && { gResultRss: summary.g.met, gBoundsHeld: summary.g.boundsHeld }),
  // (h) is figures with no target: what the queue costs per call, and how throughput goes with workers.
  ...(summary.i && { iUiUnder1s: summary.i.met }),
  // (j): file stable → first step start in watch mode, kept at the issue's p50 / p95.
  ...(summary.j && { jWatchLatencyKept: summary.j.met }),
};
const missed = Object.entries(summary.targets).filter(([, met]) => met === false).map(([name]) => name);
say(`load after: ${summary.loadAfter.join(' ')}; machine speed probe: ${summary.speedProbeMsAfter} ms; targets ${missed.length === 0 ? 'all met' : `missed: ${missed.join(', ')}`}`);
process.stdout.write(`${JSON.stringify(summary)}\n`);
