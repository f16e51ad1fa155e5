// (f) Listing the run history: an artifacts folder whose store holds 10,000
// recorded runs (about five steps each, five workflows, mixed statuses,
// written through the store API of dist/), then `runner runs --limit 20`,
// `--json`, and `runs show ID` timed from spawn to exit, as (c) times a run.
// `node -e 0`, `runner --version`, the same listing on an empty store, and
// the store's own query in this process are alongside, to tell apart what the
// history costs from what starting the CLI costs.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { importDist } from '../lib/dist.mjs';
import { seedRunHistory } from '../lib/seed-runs.mjs';
import { median, round, say, verdict } from '../lib/stats.mjs';
import { timeNodeProcess } from '../lib/time-process.mjs';
import { cliPath, createWorkspace } from '../lib/workspace.mjs';

export const HISTORY_TARGET_MS = 300;
const LIMIT = 20;

/** Median ms, in this process, of opening the store, `use`-ing it and closing it (what the command does besides starting). */
function timeStoreQuery(openRunStore, artifacts, use, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const store = openRunStore(artifacts);
    try {
      use(store);
    } finally {
      store.close();
    }
    times.push(performance.now() - started);
  }
  return round(median(times), 2);
}

/** Bytes of the store's files (database, WAL, shared memory) under `artifacts`. */
function measureStore(artifacts) {
  const size = (suffix) => {
    const file = join(artifacts, '.runner', `runs.db${suffix}`);
    return existsSync(file) ? statSync(file).size : 0;
  };
  return { dbBytes: size(''), walBytes: size('-wal'), shmBytes: size('-shm') };
}

/** Throws unless a command printed what it should have: guards against timing an error path. */
function checkOutput(name, stdout, { newest, shown }) {
  const fail = (what) => {
    throw new Error(`(f) \`${name}\` printed ${what}:\n${stdout.slice(0, 500)}`);
  };
  if (name === 'list') {
    const lines = stdout.split('\n').filter(Boolean);
    if (lines.length !== LIMIT || !lines[0].startsWith(newest)) fail(`${lines.length} lines, expected ${LIMIT} starting with ${newest}`);
  } else if (name === 'listJson') {
    const runs = JSON.parse(stdout);
    if (runs.length !== LIMIT || runs[0].id !== newest) fail(`${runs.length} runs, expected ${LIMIT} starting with ${newest}`);
  } else if (name === 'show') {
    if (!stdout.includes(shown) || stdout.split('\n').length < 6) fail(`no steps of ${shown}`);
  } else if (name === 'listEmpty' && stdout !== '') {
    fail('runs, expected none');
  } else if (name === 'version' && !/^\d+\.\d+/.test(stdout)) {
    fail('no version');
  }
}

export async function benchHistory({ reps, runs: count = 10_000, sides }) {
  const runs = Math.max(reps, 10);
  const workspace = createWorkspace();
  const empty = createWorkspace();
  try {
    // Imported here, not at the top: builds from before the store have none, and may still run the other cases.
    const { findRun, openRunStore } = await importDist('store/run-history.js');
    const { ids, seedMs } = await seedRunHistory(workspace.artifacts, { count });
    const store = measureStore(workspace.artifacts);
    const newest = ids.at(-1);
    // A run from the middle of the history, of the workflow with a foreach step (ten items).
    const shown = ids[Math.floor(count / 10) * 5 + 3];
    say(
      `(f) seeded ${count} runs through the store API in ${round(seedMs, 0)} ms: runs.db ${round(store.dbBytes / 2 ** 20, 1)} MB` +
        `${store.walBytes ? ` + WAL ${round(store.walBytes / 2 ** 20, 1)} MB` : ''} (${round(store.dbBytes / count / 1024, 2)} KB per run)`,
    );
    const commands = {
      node: { args: ['-e', '0'], cwd: workspace.dir },
      ...(sides.runner && {
        version: { args: [cliPath, '--version'], cwd: workspace.dir },
        list: { args: [cliPath, 'runs', '--limit', String(LIMIT)], cwd: workspace.dir },
        listJson: { args: [cliPath, 'runs', '--limit', String(LIMIT), '--json'], cwd: workspace.dir },
        show: { args: [cliPath, 'runs', 'show', shown], cwd: workspace.dir },
        listEmpty: { args: [cliPath, 'runs', '--limit', String(LIMIT)], cwd: empty.dir },
      }),
    };
    // One untimed round (file cache, the empty store's creation), checking every output.
    for (const [name, { args, cwd }] of Object.entries(commands)) checkOutput(name, (await timeNodeProcess(args, cwd)).stdout, { newest, shown });
    const times = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
    for (let rep = 0; rep < runs; rep++) {
      const names = Object.keys(commands);
      for (const name of rep % 2 === 0 ? names : names.reverse()) {
        const { args, cwd } = commands[name];
        times[name].push((await timeNodeProcess(args, cwd)).ms);
      }
    }
    const medianMs = (name) => round(median(times[name]), 1);
    // The same work without the process: open the store, query, close.
    const inProcess = {
      listMs: timeStoreQuery(openRunStore, workspace.artifacts, (store) => store.listRuns({ limit: LIMIT }), runs),
      showMs: timeStoreQuery(openRunStore, workspace.artifacts, (store) => findRun(store, workspace.artifacts, shown), runs),
    };
    const check = verdict(sides.runner ? medianMs('list') : NaN, HISTORY_TARGET_MS, 'max');
    const result = {
      runs: count,
      repetitions: runs,
      seedMs: round(seedMs, 0),
      store: { ...store, kbPerRun: round(store.dbBytes / count / 1024, 2) },
      listMs: sides.runner ? medianMs('list') : null,
      target: HISTORY_TARGET_MS,
      met: check.met,
      listJsonMs: sides.runner ? medianMs('listJson') : null,
      showMs: sides.runner ? medianMs('show') : null,
      listEmptyMs: sides.runner ? medianMs('listEmpty') : null,
      versionMs: sides.runner ? medianMs('version') : null,
      nodeStartMs: medianMs('node'),
      storeInProcessMs: inProcess,
      runsMs: Object.fromEntries(Object.entries(times).map(([name, list]) => [name, list.map((ms) => round(ms, 1))])),
    };
    if (sides.runner) {
      say(`(f) \`runner runs --limit ${LIMIT}\` over ${count} runs, spawn to exit (${runs} runs each): ${result.listMs} ms (${check.text})`);
      say(`    --json ${result.listJsonMs} ms; \`runs show ID\` ${result.showMs} ms; the same listing on an empty store ${result.listEmptyMs} ms`);
      say(`    for scale: \`runner --version\` ${result.versionMs} ms, bare \`node -e 0\` ${result.nodeStartMs} ms; in this process, open + query + close: list ${inProcess.listMs} ms, show ${inProcess.showMs} ms`);
    }
    return result;
  } finally {
    workspace.remove();
    empty.remove();
  }
}
