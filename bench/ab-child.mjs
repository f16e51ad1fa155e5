// One turn of bench/ab.mjs, in a process of its own with RUNNER_DIST naming
// the build: the case's runner runs and raw client runs taking turns (the
// first two of each untimed), then one JSON line with the medians.
//
//   RUNNER_DIST=DIR node bench/ab-child.mjs foreach|chain [--tmpfs]
import { openEngine, timeEngineRun } from './lib/engine.mjs';
import { collectGarbage } from './lib/gc.mjs';
import { median } from './lib/stats.mjs';
import { chainWorkflowYaml, createWorkspace, foreachWorkflowYaml } from './lib/workspace.mjs';
import { connectRaw, runRawChain, runRawFanout, verdictOf } from './raw-client.mjs';

const CASES = {
  // (b): 2,000 calls of 5 ms, 32 in flight, as one foreach step.
  foreach: { calls: 2000, yaml: () => foreachWorkflowYaml('ab', 32, 5), inputs: { items: Array.from({ length: 2000 }, (_, i) => i) }, raw: (client) => runRawFanout(client, 2000, 32, 5) },
  // (a): 1,000 steps of 0 ms in a chain.
  chain: { calls: 1000, yaml: () => chainWorkflowYaml('ab', 1000, 0), inputs: {}, raw: (client) => runRawChain(client, 1000, 0) },
};
const RUNS = 6;
const UNTIMED = 2;

const [name, ...flags] = process.argv.slice(2);
const spec = CASES[name];
if (!spec) {
  console.error(`usage: RUNNER_DIST=DIR node bench/ab-child.mjs ${Object.keys(CASES).join('|')} [--tmpfs]`);
  process.exit(2);
}
const workspace = createWorkspace({ concurrency: 32, tmpfs: flags.includes('--tmpfs') });
try {
  const engine = await openEngine(workspace);
  const probe = await connectRaw(workspace.app);
  const prior = verdictOf(probe);
  await probe.close();
  const raw = await connectRaw(workspace.app, prior, { listTools: true });
  const workflow = engine.parse(spec.yaml(), 'ab.yaml');
  const runner = { ms: [], cpuUs: [] };
  const rawMs = [];
  for (let i = 0; i < RUNS; i++) {
    collectGarbage();
    const run = await timeEngineRun(engine, workflow, spec.inputs);
    collectGarbage();
    const ms = await spec.raw(raw);
    if (i < UNTIMED) continue;
    runner.ms.push(run.ms);
    runner.cpuUs.push((run.cpuMs * 1000) / spec.calls);
    rawMs.push(ms);
  }
  await raw.close();
  await engine.close();
  const [runnerMs, rawMsMedian] = [median(runner.ms), median(rawMs)];
  console.log(
    JSON.stringify({ runnerMs, rawMs: rawMsMedian, ratio: rawMsMedian / runnerMs, overheadUsPerCall: ((runnerMs - rawMsMedian) * 1000) / spec.calls, cpuUsPerCall: median(runner.cpuUs) }),
  );
} finally {
  workspace.remove();
}
