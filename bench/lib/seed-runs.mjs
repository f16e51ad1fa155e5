// A run history for (f): many recorded runs written straight through the
// store API of the build under test (SqliteRunStore from dist/), as the
// runner would have left them, without executing any of them.
import { join } from 'node:path';
import { importDist } from './dist.mjs';

const DAY_MS = 86_400_000;
/** Commits of this many runs each: 10,000 single-run transactions would time the seeding, not the listing. */
const BATCH = 500;

// Five workflows of the shapes the examples use: a watch trigger on images,
// a nightly schedule, and manual runs; about five steps each, one foreach.
const WORKFLOWS = [
  { name: 'resize-images', trigger: 'watch', steps: ['image.info', 'image.resize', 'image.thumbnail', 'sheet.append_rows', 'image.describe'] },
  { name: 'nightly-report', trigger: 'schedule', steps: ['sheet.read_range', 'sheet.create_workbook', 'sheet.write_range', 'sheet.add_sheet', 'sheet.format'] },
  { name: 'invoice-export', trigger: 'manual', steps: ['sheet.read_range', 'sheet.read_range', 'image.render', 'sheet.write_range'] },
  { name: 'catalog-sync', trigger: 'schedule', steps: ['sheet.read_range', 'image.info', 'image.resize', 'sheet.write_range', 'sheet.add_sheet', 'sheet.delete_sheet'], foreach: 2 },
  { name: 'watch-inbox', trigger: 'watch', steps: ['image.info', 'image.convert', 'sheet.append_rows'] },
];

/** A small deterministic generator (mulberry32), so every bench run seeds the same history. */
function createRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Writes `count` finished runs into the store of `artifacts`, started over the
 * last 30 days before `nowMs`: 88% succeeded, 9% failed, 3% cancelled. Returns
 * every id (oldest first) and how long the seeding took.
 */
export async function seedRunHistory(artifacts, { count = 10_000, nowMs = Date.now(), seed = 1 } = {}) {
  // Imported here, not at the top: bench/run.mjs loads this file for every case, and builds from before the store have none.
  const { openRunStore } = await importDist('store/run-history.js');
  const { currentOwner } = await importDist('store/run-owner.js');
  const { createRunId } = await importDist('artifacts/run-id.js');
  const random = createRandom(seed);
  const started = performance.now();
  // openRunStore, not the bare class: it also marks the folder as imported, as any runner command would.
  const store = openRunStore(artifacts, nowMs);
  const owner = currentOwner(nowMs);
  const ids = [];
  try {
    const spacingMs = (30 * DAY_MS) / count;
    for (let first = 0; first < count; first += BATCH) {
      store.inTransaction(() => {
        for (let n = first; n < Math.min(first + BATCH, count); n++) {
          const startMs = nowMs - 30 * DAY_MS + Math.floor(n * spacingMs + random() * spacingMs * 0.5);
          const stored = createStoredRun(artifacts, WORKFLOWS[n % WORKFLOWS.length], createRunId(startMs), startMs, random);
          store.createRun(stored, owner);
          store.releaseRun(stored.run.id, owner);
          ids.push(stored.run.id);
        }
      });
    }
  } finally {
    store.close();
  }
  return { ids, seedMs: performance.now() - started };
}

function createStoredRun(artifacts, workflow, id, startMs, random) {
  const roll = random();
  const status = roll < 0.88 ? 'succeeded' : roll < 0.97 ? 'failed' : 'cancelled';
  const stopAt = status === 'succeeded' ? workflow.steps.length : Math.floor(random() * workflow.steps.length);
  let clockMs = startMs + 40;
  const steps = workflow.steps.map((uses, index) => {
    const stepStart = clockMs;
    const tookMs = 5 + Math.floor(random() * 400);
    clockMs += tookMs + 2;
    const ran = index <= stopAt;
    const failedHere = index === stopAt && status !== 'succeeded';
    const stepStatus = !ran ? (status === 'cancelled' ? 'cancelled' : 'skipped') : failedHere ? (status === 'cancelled' ? 'cancelled' : 'failed') : 'succeeded';
    return createStep(artifacts, workflow, id, index, uses, stepStatus, ran ? stepStart : null, ran ? stepStart + tookMs : null, random);
  });
  const endMs = clockMs + 10;
  const trigger = triggerOf(workflow, startMs, id);
  return {
    run: {
      id,
      workflow: workflow.name,
      workflowFile: `/srv/workflows/${workflow.name}.yaml`,
      status,
      trigger,
      inputs: workflow.trigger === 'watch' ? { file: trigger.path } : { since: new Date(startMs - DAY_MS).toISOString().slice(0, 10) },
      startedAt: new Date(startMs).toISOString(),
      endedAt: new Date(endMs).toISOString(),
      dir: join(artifacts, workflow.name, id),
      apps: {
        image: { protocolVersion: '2026-07-28', server: { name: 'image', version: '1.0.0' } },
        sheet: { protocolVersion: '2026-07-28', server: { name: 'sheet', version: '1.0.0' } },
      },
      error: status === 'cancelled' ? { message: 'cancelled (SIGINT)' } : null,
      durationMs: endMs - startMs,
    },
    steps,
  };
}

function createStep(artifacts, workflow, runId, index, uses, status, startMs, endMs, random) {
  const stepId = `${uses.split('.')[1].replaceAll('_', '-')}-${index}`;
  const dir = join(artifacts, workflow.name, runId, stepId);
  const iso = (ms) => (ms === null ? null : new Date(ms).toISOString());
  const error = status === 'failed' ? { kind: 'tool', message: `${uses} reported an error: file not found: inbox/scan-${Math.floor(random() * 1000)}.png` } : null;
  const outputs = status === 'succeeded' ? { path: `out/${runId}/${stepId}.png`, width: 1024, height: 768, rows: Math.floor(random() * 500) } : null;
  const record = {
    id: stepId,
    uses,
    status,
    attempts: startMs === null ? 0 : 1,
    startedAt: iso(startMs),
    endedAt: iso(endMs),
    args: { path: `inbox/scan-${index}.png`, width: 1024, sheet: 'Summary', range: 'A1:F200' },
    outputs,
    text: outputs ? JSON.stringify(outputs) : '',
    files: status === 'succeeded' ? [join(dir, 'result.json')] : [],
    policy: startMs === null ? null : 'allow',
    error,
    history: startMs === null ? [] : [{ attempt: 1, startedAt: iso(startMs), endedAt: iso(endMs), error }],
  };
  if (index !== workflow.foreach || startMs === null) return { record };
  // A foreach step: ten items, each a call of its own.
  const items = Array.from({ length: 10 }, (_, item) => ({
    index: item,
    status: status === 'failed' && item === 9 ? 'failed' : 'succeeded',
    attempts: 1,
    args: { path: `catalog/item-${item}.png` },
    outputs: { width: 640, height: 480 },
    text: '{"width":640,"height":480}',
    files: [join(dir, String(item), 'result.json')],
    error: status === 'failed' && item === 9 ? error : null,
    history: [{ attempt: 1, startedAt: iso(startMs), endedAt: iso(endMs), error: status === 'failed' && item === 9 ? error : null }],
  }));
  return { record: { ...record, text: items.map((item) => item.text) }, items };
}

function triggerOf(workflow, startMs, id) {
  if (workflow.trigger === 'manual') return { type: 'manual' };
  if (workflow.trigger === 'schedule') {
    const time = new Date(Math.floor(startMs / 60_000) * 60_000).toISOString();
    return { type: 'schedule', time, occurrence: `${workflow.name}@${time}`, cron: '*/5 * * * *' };
  }
  const path = `/srv/inbox/processing/scan-${id.slice(-4)}.png`;
  return { type: 'watch', event: 'add', path, source: `/srv/inbox/scan-${id.slice(-4)}.png`, settledAt: new Date(startMs - 500).toISOString() };
}
