// Where a call's CPU goes, runner against the raw client, in one process: both
// sides run the same calls against the same app, alternating, and each side's
// timed runs are CPU-profiled (V8's sampling profiler, 100 µs). Every sample of
// the main thread is put into one category by the innermost frame on its stack
// that a rule below names (report, result.json, store, ...), and each category
// is printed in µs per call. A diagnostic for finding levers, not a benchmark
// figure: the profiler costs a little of its own, and it sees only the main
// thread (V8's GC and compiler threads and the kernel's work for other threads
// are in the process's CPU, printed beside it).
//
//   node bench/profile-calls.mjs [--case foreach|steps|chain] [--runs 3] [--tmpfs] [--out DIR]
//
// foreach: one step over 2,000 items of 5 ms calls, 32 in flight (as (b));
// steps: the same as 2,000 separate steps; chain: 1,000 chained 0 ms calls
// (as (a)). --tmpfs puts the artifacts on /dev/shm; --out writes each side's
// .cpuprofile there (open it in Chrome DevTools).
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuMsSince, openEngine, timeEngineRun } from './lib/engine.mjs';
import { collectGarbage } from './lib/gc.mjs';
import { connectRaw, runRawChain, runRawFanout, verdictOf } from './raw-client.mjs';
import { chainWorkflowYaml, createWorkspace, foreachWorkflowYaml, independentWorkflowYaml } from './lib/workspace.mjs';

const { values: options } = parseArgs({
  options: {
    case: { type: 'string', default: 'foreach' },
    runs: { type: 'string', default: '3' },
    tmpfs: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const runs = Number(options.runs);
if (!['foreach', 'steps', 'chain'].includes(options.case) || !(runs >= 1)) {
  console.error('usage: node bench/profile-calls.mjs [--case foreach|steps|chain] [--runs N] [--tmpfs] [--out DIR]');
  process.exit(2);
}

/**
 * Writers of whole files that use the same helpers as result.json: a sample with one of them anywhere on its
 * stack belongs to it (the report's rendering and its file writes alike).
 */
const OWNERS = [
  ['report.html', (url) => url.includes('/report/html/')],
  ['run.json', (url) => url.endsWith('/artifacts/run-record.js')],
];
/** The rest, tried in order against each frame from the sampled one up: the first frame a rule names decides. */
const CATEGORIES = [
  ['result.json and saved files', (url) => /\/artifacts\/(json-file|atomic-file|save-result|write-behind|large-strings|text-chunks)\.js$/.test(url)],
  ['run store', (url) => url.includes('/store/') || url.includes('/better-sqlite3/')],
  ['MCP SDK and zod', (url) => url.includes('/@modelcontextprotocol/') || url.includes('/zod/')],
  ['runner: apps (transport, connection)', (url) => url.includes('/dist/apps/')],
  ['runner: scheduler, queue, workflow', (url) => /\/dist\/(scheduler|queue|workflow|builtins)\//.test(url)],
];
/** Frames without a script that are worth a category of their own. */
const NATIVE = new Map([
  ['(garbage collector)', 'GC (main thread)'],
  ['writeUtf8String', 'pipe write (wakes the app)'],
  ['writeBuffer', 'pipe write (wakes the app)'],
]);

const workspace = createWorkspace({ concurrency: 32, tmpfs: options.tmpfs });
const engine = await openEngine(workspace);
const probe = await connectRaw(workspace.app);
const prior = verdictOf(probe);
await probe.close();
const raw = await connectRaw(workspace.app, prior, { listTools: true });

const CALLS = options.case === 'chain' ? 1000 : 2000;
const sides = sidesFor(options.case);
const session = new Session();
session.connect();
try {
  for (let round = 0; round < 2; round++) for (const run of Object.values(sides)) await run(); // warm-up: JIT, caches
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  const results = {};
  for (const [name, run] of Object.entries(sides)) {
    collectGarbage();
    await session.post('Profiler.start');
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < runs; i++) await run();
    const wallMs = performance.now() - started;
    const cpuMs = cpuMsSince(cpuBefore);
    const { profile } = await session.post('Profiler.stop');
    if (options.out) {
      mkdirSync(options.out, { recursive: true });
      writeFileSync(join(options.out, `${options.case}-${name}.cpuprofile`), JSON.stringify(profile));
    }
    results[name] = { wallMs, cpuMs, categories: categorize(profile) };
  }
  print(results);
} finally {
  session.disconnect();
  await raw.close();
  await engine.close();
  workspace.remove();
}

function sidesFor(kind) {
  if (kind === 'chain') {
    const workflow = engine.parse(chainWorkflowYaml('chain', CALLS, 0), 'chain.yaml');
    return { runner: () => timeEngineRun(engine, workflow), raw: () => runRawChain(raw, CALLS, 0) };
  }
  if (kind === 'steps') {
    const workflow = engine.parse(independentWorkflowYaml('steps', CALLS, 32, 5), 'steps.yaml');
    return { runner: () => timeEngineRun(engine, workflow), raw: () => runRawFanout(raw, CALLS, 32, 5) };
  }
  const workflow = engine.parse(foreachWorkflowYaml('fanout', 32, 5), 'fanout.yaml');
  const items = Array.from({ length: CALLS }, (_, i) => i);
  return { runner: () => timeEngineRun(engine, workflow, { items }), raw: () => runRawFanout(raw, CALLS, 32, 5) };
}

/** The main thread's busy time by category, in µs per call. */
function categorize(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node);
  const totals = new Map();
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const leaf = nodes.get(profile.samples[i]);
    const us = profile.timeDeltas[i + 1] ?? 0; // a sample's time runs until the next one
    if (leaf.callFrame.functionName === '(idle)' || leaf.callFrame.functionName === '(program)') continue;
    busyUs += us;
    const category = categoryOf(leaf, parents);
    totals.set(category, (totals.get(category) ?? 0) + us);
  }
  const perCall = (us) => us / (runs * CALLS);
  return { busyUs: perCall(busyUs), byCategory: new Map([...totals].map(([name, us]) => [name, perCall(us)])) };
}

function categoryOf(leaf, parents) {
  const native = NATIVE.get(leaf.callFrame.functionName);
  if (native) return native;
  const stack = [];
  for (let node = leaf; node; node = parents.get(node.id)) if (node.callFrame.url) stack.push(node.callFrame.url);
  for (const [name, test] of OWNERS) if (stack.some(test)) return name;
  for (const url of stack) for (const [name, test] of CATEGORIES) if (test(url)) return name;
  return 'other (Node internals, promise jobs, timers)';
}

function print(results) {
  const names = Object.keys(results);
  const per = (ms) => ((ms * 1000) / (runs * CALLS)).toFixed(1);
  console.log(`${options.case}: ${CALLS} calls × ${runs} runs per side${options.tmpfs ? ', artifacts on tmpfs' : ''}; µs per call`);
  console.log(`${'side'.padEnd(44)}${names.map((name) => name.padStart(10)).join('')}`);
  console.log(`${'wall time'.padEnd(44)}${names.map((name) => per(results[name].wallMs).padStart(10)).join('')}`);
  console.log(`${'process CPU (every thread, and the kernel)'.padEnd(44)}${names.map((name) => per(results[name].cpuMs).padStart(10)).join('')}`);
  console.log(`${'main thread busy (profiled), of which:'.padEnd(44)}${names.map((name) => results[name].categories.busyUs.toFixed(1).padStart(10)).join('')}`);
  const categories = new Set(names.flatMap((name) => [...results[name].categories.byCategory.keys()]));
  const order = [...categories].sort((a, b) => (results.runner.categories.byCategory.get(b) ?? 0) - (results.runner.categories.byCategory.get(a) ?? 0));
  for (const category of order) {
    console.log(`  ${category.padEnd(42)}${names.map((name) => (results[name].categories.byCategory.get(category) ?? 0).toFixed(1).padStart(10)).join('')}`);
  }
}
