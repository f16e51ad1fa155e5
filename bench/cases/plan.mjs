// (d) Validating and planning a 10,000-step workflow (parseWorkflowText +
// planLevels), each time in a fresh process so its peak memory is its own.
// Two shapes: `mixed` (the target: references, needs, if, foreach) and
// `chain` (every step reads the one before, as in (a)).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median, round, say } from '../lib/stats.mjs';
import { chainWorkflowYaml, createWorkspace, largeWorkflowYaml } from '../lib/workspace.mjs';

// The targets: at most 250 ms and 100 MB (peak RSS, Node's own ~55 MB included).
export const TIME_TARGET_MS = 250;
export const MEMORY_TARGET_MB = 100;

const child = fileURLToPath(new URL('../plan-child.mjs', import.meta.url));
const run = promisify(execFile);

async function measureShape(workspace, file, runs, nodeArgs = []) {
  const samples = [];
  for (let rep = 0; rep < runs; rep++) {
    const { stdout } = await run(process.execPath, [...nodeArgs, child, workspace.dir, file], { maxBuffer: 1 << 20 });
    samples.push(JSON.parse(stdout));
  }
  const pick = (key) => samples.map((sample) => sample[key]);
  const totalMs = median(pick('totalMs'));
  const peakRssMB = Math.max(...pick('peakRssMB'));
  return {
    steps: samples[0].steps,
    levels: samples[0].levels,
    yamlKB: round(samples[0].bytes / 1024, 0),
    runs: samples.length,
    totalMs: round(totalMs, 1),
    parseMs: round(median(pick('parseMs')), 1),
    mainThreadCpuMs: round(median(pick('mainThreadCpuMs')), 0),
    mainThreadWaitMs: round(median(pick('mainThreadWaitMs')), 1),
    planMs: round(median(pick('planMs')), 2),
    peakRssMB: round(peakRssMB, 1),
    baselineRssMB: round(median(pick('baselineRssMB')), 1),
    heapUsedAfterMB: round(median(pick('heapUsedAfterMB')), 1),
    timeMet: totalMs <= TIME_TARGET_MS,
    memoryMet: peakRssMB <= MEMORY_TARGET_MB,
    runsMs: pick('totalMs').map((ms) => round(ms, 1)),
  };
}

export async function benchPlan({ reps, steps = 10_000 }) {
  const workspace = createWorkspace();
  const runs = Math.max(reps, 3);
  try {
    const shapes = {
      mixed: workspace.write('mixed.yaml', largeWorkflowYaml('mixed', steps)),
      chain: workspace.write('chain.yaml', chainWorkflowYaml('chain', steps, 0)),
    };
    const result = { timeTargetMs: TIME_TARGET_MS, memoryTargetMB: MEMORY_TARGET_MB };
    for (const [shape, file] of Object.entries(shapes)) {
      const figures = await measureShape(workspace, file, runs);
      result[shape] = figures;
      const mark = (met) => (met ? 'met' : 'MISSED');
      say(
        `(d) validate + plan ${steps} steps, ${shape} (${figures.yamlKB} KB YAML, ${figures.levels} levels): ${figures.totalMs} ms ` +
          `(parse ${figures.parseMs}, plan ${figures.planMs}; main thread's CPU ${figures.mainThreadCpuMs} ms, waiting for a core ${figures.mainThreadWaitMs} ms) (≤ ${TIME_TARGET_MS} ms ${shape === 'mixed' ? mark(figures.timeMet) : 'for comparison'}); ` +
          `peak RSS ${figures.peakRssMB} MB, ${figures.baselineRssMB} MB before parsing (≤ ${MEMORY_TARGET_MB} MB ${shape === 'mixed' ? mark(figures.memoryMet) : 'for comparison'})`,
      );
    }
    // Diagnostic: the same load with V8's pool of background threads cut from Node's default of 4 to 1.
    // On two cores its compiler and GC threads keep the main thread waiting for a core (mainThreadWaitMs).
    const onePool = await measureShape(workspace, shapes.mixed, runs, ['--v8-pool-size=1']);
    result.mixed.v8PoolSize1 = { totalMs: onePool.totalMs, mainThreadWaitMs: onePool.mainThreadWaitMs, runsMs: onePool.runsMs };
    say(`    diagnostic, mixed with \`node --v8-pool-size=1\` (Node's default is 4): ${onePool.totalMs} ms, waiting for a core ${onePool.mainThreadWaitMs} ms`);
    result.timeMet = result.mixed.timeMet;
    result.memoryMet = result.mixed.memoryMet;
    return result;
  } finally {
    workspace.remove();
  }
}
