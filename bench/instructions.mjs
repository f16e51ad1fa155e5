// A deterministic A/B of the runner's own cost: run it under valgrind's
// callgrind, which counts instructions instead of timing them, so the figure
// does not move with the VM's load (wall and CPU time here swing by ±50%).
//
//   valgrind --tool=callgrind --smc-check=all --callgrind-out-file=/tmp/new.out node bench/instructions.mjs
//   RUNNER_DIST=/path/to/other/dist valgrind ... node bench/instructions.mjs   # the other build
//   grep 'I   refs' on valgrind's output; about 1.5 minutes per build
//
// Two rounds of a 200-step chain and a 200-item foreach (0 ms tool, app
// already connected), counting the whole process: start-up included.
import { openEngine, timeEngineRun } from './lib/engine.mjs';
import { chainWorkflowYaml, createWorkspace, foreachWorkflowYaml } from './lib/workspace.mjs';

const workspace = createWorkspace({ concurrency: 8 });
const engine = await openEngine(workspace);
const chain = engine.parse(chainWorkflowYaml('chain', 200, 0), 'chain.yaml');
const fanout = engine.parse(foreachWorkflowYaml('fan', 8, 0), 'fan.yaml');
const items = Array.from({ length: 200 }, (_, i) => i);
for (let round = 0; round < 2; round++) {
  await timeEngineRun(engine, chain);
  await timeEngineRun(engine, fanout, { items });
}
await engine.close();
