// One turn of bench/ab.mjs, in a process of its own with RUNNER_DIST naming
// the build: the case's runner runs and raw client runs taking turns, as the
// bench's own cases do (measureInterleaved: a forced GC before each run, one
// untimed round), then one JSON line with the medians.
//
//   RUNNER_DIST=DIR node bench/ab-child.mjs foreach|chain|chain5 [--tmpfs]
import { openEngine, timeEngineRun } from './lib/engine.mjs';
import { measureInterleaved } from './lib/interleave.mjs';
import { chainWorkflowYaml, createWorkspace, foreachWorkflowYaml } from './lib/workspace.mjs';
import { connectRaw, runRawChain, runRawFanout, verdictOf } from './raw-client.mjs';

const CASES = {
  // (b): 2,000 calls of 5 ms, 32 in flight, as one foreach step.
  foreach: { calls: 2000, yaml: () => foreachWorkflowYaml('ab', 32, 5), inputs: { items: Array.from({ length: 2000 }, (_, i) => i) }, raw: (client) => runRawFanout(client, 2000, 32, 5) },
  // (a): 1,000 steps of 0 ms in a chain.
  chain: { calls: 1000, yaml: () => chainWorkflowYaml('ab', 1000, 0), inputs: {}, raw: (client) => runRawChain(client, 1000, 0) },
  // (a)'s 5 ms chain, shorter (a step takes about 6 ms): 300 steps.
  chain5: { calls: 300, yaml: () => chainWorkflowYaml('ab', 300, 5), inputs: {}, raw: (client) => runRawChain(client, 300, 5) },
};
/** Timed rounds of the two sides, after measureInterleaved's untimed one. */
const TIMED_ROUNDS = 4;

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
  const times = await measureInterleaved({ runner: () => timeEngineRun(engine, workflow, spec.inputs), raw: () => spec.raw(raw) }, TIMED_ROUNDS);
  await raw.close();
  await engine.close();
  const { ms: runnerMs, cpuMs } = times.runner;
  const rawMs = times.raw.ms;
  console.log(JSON.stringify({ runnerMs, rawMs, ratio: rawMs / runnerMs, overheadUsPerCall: ((runnerMs - rawMs) * 1000) / spec.calls, cpuUsPerCall: (cpuMs * 1000) / spec.calls }));
} finally {
  workspace.remove();
}
