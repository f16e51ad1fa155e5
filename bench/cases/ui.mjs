// (i) The web UI: `runner ui`'s server (in this process, on a free loopback
// port) over a store of 10,000 recorded runs and one run of 1,000 steps.
// Timed from request to the last byte of the page: the runs list, the list
// filtered by workflow and status, and the 1,000-step run's page (its
// report, rendered for the request). Target: each under a second.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { importDist } from '../lib/dist.mjs';
import { seedRunHistory } from '../lib/seed-runs.mjs';
import { median, round, say, verdict } from '../lib/stats.mjs';
import { createWorkspace } from '../lib/workspace.mjs';

export const UI_TARGET_MS = 1000;
const BIG_RUN = '20261201-000000-000-big0';

export async function benchUi({ reps }) {
  const { openRunStore } = await importDist('store/run-history.js');
  const { startUi } = await importDist('ui/ui-server.js');
  const workspace = createWorkspace();
  const artifacts = join(workspace.dir, 'artifacts');
  const { seedMs } = await seedRunHistory(artifacts, { count: 10_000 });
  const store = openRunStore(artifacts);
  saveBigRun(store, artifacts, 1000);
  const ui = await startUi({ store, artifacts, configDir: workspace.dir, allowActions: false, host: '127.0.0.1', port: 0 });
  try {
    const pages = {
      list: '/',
      filtered: '/?workflow=nightly-report&status=failed',
      run1000: `/runs/${BIG_RUN}/`,
    };
    const result = { runs: 10_001, steps: 1000, seedMs: round(seedMs, 0), targetMs: UI_TARGET_MS };
    for (const [name, path] of Object.entries(pages)) {
      await load(ui.url + path); // warm: the first request loads the report's modules
      const times = [];
      let bytes = 0;
      for (let i = 0; i < Math.max(reps, 3); i++) {
        const started = performance.now();
        bytes = await load(ui.url + path);
        times.push(performance.now() - started);
      }
      const ms = round(median(times), 1);
      const checked = verdict(ms, UI_TARGET_MS, 'max');
      result[name] = { ms, bytes, met: checked.met };
      say(`(i) ${name} (${path}): ${ms} ms median, ${Math.round(bytes / 1024)} KiB (ms ${checked.text})`);
    }
    result.met = result.list.met && result.filtered.met && result.run1000.met;
    return result;
  } finally {
    await ui.close();
    store.close();
    workspace.remove();
  }
}

async function load(url) {
  const response = await fetch(url, { headers: { host: new URL(url).host } });
  const text = await response.text();
  if (!response.ok) throw new Error(`(i) ${url} answered ${response.status}: ${text.slice(0, 200)}`);
  return text.length;
}

/** A finished run of `count` steps in a chain, each with arguments and outputs, written straight to the store. */
function saveBigRun(store, artifacts, count) {
  const dir = join(artifacts, 'big', BIG_RUN);
  mkdirSync(dir, { recursive: true });
  const start = Date.parse('2026-12-01T00:00:00Z');
  const steps = Array.from({ length: count }, (_, index) => ({
    record: {
      id: `step_${index}`,
      uses: index % 2 ? 'sheet.write_range' : 'image.resize',
      status: index % 97 === 0 ? 'failed' : 'succeeded',
      attempts: 1,
      startedAt: new Date(start + index * 20).toISOString(),
      endedAt: new Date(start + index * 20 + 15).toISOString(),
      args: { range: `A${index}`, values: [[index, `row ${index}`]] },
      outputs: { written: index },
      text: `wrote row ${index}`,
      files: [],
      policy: 'allow',
      policyReason: 'read-only',
      error: index % 97 === 0 ? { kind: 'tool', message: `row ${index} was locked` } : null,
      history: [],
      needs: index === 0 ? [] : [`step_${index - 1}`],
      declaredNeeds: index === 0 ? [] : [`step_${index - 1}`],
    },
  }));
  const run = {
    id: BIG_RUN,
    workflow: 'big',
    status: 'failed',
    trigger: { type: 'manual' },
    inputs: {},
    startedAt: new Date(start).toISOString(),
    endedAt: new Date(start + count * 20).toISOString(),
    dir,
    apps: {},
  };
  store.createRun({ run, steps }, { host: 'bench', pid: process.pid, started: null, heartbeatMs: Date.now() });
}
