#!/usr/bin/env node
// Compares two builds of the runner on one workload, taking turns: each turn
// is a fresh process (bench/ab-child.mjs) that runs the case on one build and
// on the raw SDK client, and the order flips every pair (A B, B A, ...), so a
// machine that speeds up or slows down meanwhile hits both builds alike. What
// one `npm run bench` cannot tell apart from this machine's drift, a few pairs
// usually can (bench/README.md, Comparing two builds).
//
//   node bench/ab.mjs DIST_A DIST_B [--case foreach|chain|chain5] [--pairs 6] [--tmpfs] [--json]
//
// DIST_A and DIST_B are build folders: copies of dist/ from each commit, with
// the repository's node_modules on their way up (bench/README.md shows how).
// --case foreach (default) is (b)'s 2,000 calls of 5 ms, 32 in flight; chain
// is (a)'s 1,000 steps of 0 ms; chain5 is (a)'s chain of 5 ms calls, 300 steps.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatSummary, summarizePairs } from './lib/ab-summary.mjs';
import { repoRoot } from './lib/paths.mjs';

const USAGE = 'usage: node bench/ab.mjs DIST_A DIST_B [--case foreach|chain|chain5] [--pairs N] [--tmpfs] [--json]';

function fail(message) {
  console.error(`bench/ab.mjs: ${message}\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { case: { type: 'string', default: 'foreach' }, pairs: { type: 'string', default: '6' }, tmpfs: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
  });
} catch (error) {
  fail(error.message);
}
const { values, positionals } = parsed;
if (positionals.length !== 2) fail(`expected two build folders, got ${positionals.length}`);
const builds = { a: resolve(positionals[0]), b: resolve(positionals[1]) };
for (const dir of Object.values(builds)) {
  if (!existsSync(join(dir, 'scheduler', 'executor.js'))) fail(`${dir} is not a build of the runner (no scheduler/executor.js)`);
  try {
    createRequire(join(dir, 'index.js')).resolve('@modelcontextprotocol/client');
  } catch {
    fail(`${dir} cannot find its packages: link the repository's node_modules beside it (ln -s ${join(repoRoot, 'node_modules')} ${join(dirname(dir), 'node_modules')})`);
  }
}
if (!['foreach', 'chain', 'chain5'].includes(values.case)) fail(`--case is foreach, chain or chain5, not ${values.case}`);
const pairCount = Number(values.pairs);
if (!Number.isInteger(pairCount) || pairCount < 1 || pairCount > 100) fail(`--pairs is a whole number from 1 to 100, not ${values.pairs}`);

const child = fileURLToPath(new URL('./ab-child.mjs', import.meta.url));

/** One turn: the case on one build, in a process of its own. */
function turn(side) {
  const args = [child, values.case, ...(values.tmpfs ? ['--tmpfs'] : [])];
  const result = spawnSync(process.execPath, args, { env: { ...process.env, RUNNER_DIST: builds[side] }, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  const line = result.stdout.trim().split('\n').pop() ?? '';
  if (result.status !== 0 || !line.startsWith('{')) fail(`the turn on ${builds[side]} failed (exit ${result.status}):\n${result.stderr.trim().slice(-2000)}`);
  return JSON.parse(line);
}

const pairs = [];
for (let i = 0; i < pairCount; i++) {
  const order = i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
  const pair = {};
  for (const side of order) {
    pair[side] = turn(side);
    if (!values.json) console.error(`pair ${i + 1}/${pairCount} ${side.toUpperCase()}: runner/raw ${pair[side].ratio.toFixed(3)}, CPU per call ${pair[side].cpuUsPerCall.toFixed(1)} us`);
  }
  pairs.push(pair);
}
const summary = summarizePairs(pairs);
if (values.json) console.log(JSON.stringify({ case: values.case, tmpfs: values.tmpfs, builds, pairs, summary }));
else for (const line of formatSummary(summary, builds)) console.log(line);
