// Soak benchmark for the long-running runner (issue 4, item 6): one
// `runner serve` process with an every-second schedule and a stream of files
// dropped into a watched folder, for SOAK_MINUTES minutes (default 10).
// Reports runs completed, duplicate runs (must be 0), missed occurrences and
// files (must be 0), p50/p95 latency from "file stable" to the first step's
// start, and the runner's RSS at start vs end. Human-readable lines on stderr,
// then ONE JSON object as the last line of stdout.
//
//   npm run build && node bench/soak.mjs [--minutes N] [--drop-ms MS]
//   SOAK_MINUTES=1 npm run soak
//
// Never part of `npm test`. Uses the faulty fixture app's `work` tool, which
// appends one line per call to a counter file: the side effects are counted too.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { dropFile } from './lib/drop-file.mjs';
import { startRunnerService } from './lib/runner-service.mjs';
import { cliPath } from './lib/workspace.mjs';
import { firstStepStartMs, latencySummary, readRunRecords } from './lib/latency.mjs';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const faultyApp = join(repoRoot, 'test', 'apps', 'faulty.js');

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: process.env.SOAK_MINUTES ?? '10' },
    'drop-ms': { type: 'string', default: process.env.SOAK_DROP_MS ?? '500' },
    keep: { type: 'boolean', default: false },
  },
});
const minutes = Number(values.minutes);
const dropEveryMs = Number(values['drop-ms']);
if (!(minutes > 0)) throw new Error(`Expected \`--minutes\` (or SOAK_MINUTES) to be a number above 0, got \`${values.minutes}\``);
if (!(dropEveryMs >= 10)) throw new Error(`Expected \`--drop-ms\` (or SOAK_DROP_MS) to be a number from 10 up, got \`${values['drop-ms']}\``);
if (!existsSync(cliPath)) throw new Error(`Expected a build at ${cliPath}; run \`npm run build\` first`);

const say = (line) => process.stderr.write(`${line}\n`);
const durationMs = Math.round(minutes * 60_000);
/** Time for runs in flight to finish after the last drop, before SIGTERM. */
const DRAIN_MS = 3_000;
/** RSS is compared from here on: the first seconds include JIT warm-up and app connections. */
const WARMUP_MS = Math.min(30_000, Math.round(durationMs * 0.1));

// ---- workspace ----------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'runner-soak-'));
const artifacts = join(dir, 'artifacts');
const inbox = join(artifacts, 'inbox');
const staging = join(dir, 'staging');
const counter = join(dir, 'counter.txt');
mkdirSync(join(dir, 'workflows'), { recursive: true });
mkdirSync(staging);
writeFileSync(join(dir, 'runner.config.yaml'), `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify([faultyApp, '--counter', counter])}\n`);
writeFileSync(
  join(dir, 'workflows', 'tick.yaml'),
  'name: tick\non:\n  schedule:\n    - cron: "* * * * * *"\n      overlap: allow\nsteps:\n  - id: work\n    uses: faulty.work\n    with: { label: "${{ trigger.occurrence }}" }\n',
);
writeFileSync(
  join(dir, 'workflows', 'drop.yaml'),
  'name: drop\non:\n  watch:\n    paths: ["artifacts/inbox/*.txt"]\n    debounce: 100ms\n    claim: move\nsteps:\n  - id: work\n    uses: faulty.work\n    with: { label: "${{ trigger.source }}" }\n',
);

// ---- the serve process ----------------------------------------------------
const service = await startRunnerService(['--config', join(dir, 'runner.config.yaml'), 'serve', '--json'], { cwd: dir });
const { child, events } = service;
const killChild = () => child.exitCode === null && child.kill('SIGKILL');
process.on('exit', killChild);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => (killChild(), process.exit(130)));

function rssMb(pid) {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Math.round((kb / 1024) * 10) / 10;
  } catch {
    return null;
  }
}

const readyAt = Date.now();
say(`soak: ${minutes} min, a file every ${dropEveryMs} ms plus an every-second schedule; workspace ${dir}`);

// ---- drop files, sample RSS -------------------------------------------------
const drops = new Map(); // path in inbox → ms when its last byte was written
const rssSamples = [{ atS: 0, mb: rssMb(child.pid) }];
let rssWarm = null;
let nextSampleMs = 10_000;
let nextLogMs = 60_000;
let sequence = 0;
const endDropsAt = readyAt + durationMs - DRAIN_MS;
while (Date.now() < endDropsAt) {
  const name = `f${String(++sequence).padStart(6, '0')}.txt`;
  const content = `file ${sequence} ${Math.random()}\n`.repeat(1 + (sequence % 50));
  // Every tenth file is written in place, slowly, in three chunks.
  const { path, writtenAt } = await dropFile({ inbox, staging, name, content, inPlace: sequence % 10 === 0 });
  drops.set(path, writtenAt);
  const elapsed = Date.now() - readyAt;
  if (rssWarm === null && elapsed >= WARMUP_MS) rssWarm = { atS: Math.round(elapsed / 1000), mb: rssMb(child.pid) };
  if (elapsed >= nextSampleMs) {
    rssSamples.push({ atS: Math.round(elapsed / 1000), mb: rssMb(child.pid) });
    nextSampleMs += 10_000;
  }
  if (elapsed >= nextLogMs) {
    say(`  ${Math.round(elapsed / 60_000)} min: ${events.filter((e) => e.type === 'run-finished').length} runs finished, RSS ${rssMb(child.pid)} MB`);
    nextLogMs += 60_000;
  }
  await sleep(dropEveryMs);
}
await sleep(DRAIN_MS);
const rssEnd = rssMb(child.pid);
const stoppedAt = Date.now();
const exitCode = await service.stop();

// ---- figures ----------------------------------------------------------------
const finished = events.filter((event) => event.type === 'run-finished');
const triggers = events.filter((event) => event.type === 'trigger');
const records = ['tick', 'drop'].flatMap((workflow) => readRunRecords(join(artifacts, workflow)));
const ticks = records.filter((record) => record.workflow === 'tick');
const dropsRun = records.filter((record) => record.workflow === 'drop');

const countDuplicates = (keys) => {
  const seen = new Map();
  for (const key of keys) seen.set(key, (seen.get(key) ?? 0) + 1);
  return [...seen.values()].reduce((sum, count) => sum + (count - 1), 0);
};
const counterLines = existsSync(counter) ? readFileSync(counter, 'utf8').split('\n').filter(Boolean) : [];
const duplicateRuns = countDuplicates(ticks.map((r) => r.trigger.occurrence)) + countDuplicates(dropsRun.map((r) => r.trigger.source));
const duplicateSideEffects = countDuplicates(counterLines);

// Occurrences: every second from the first one after `ready` to the last one due before SIGTERM.
const firstDueS = Math.ceil(readyAt / 1000);
const lastDueS = Math.floor((stoppedAt - 200) / 1000);
const firedSeconds = new Set(ticks.map((r) => Date.parse(r.trigger.time) / 1000));
let missedOccurrences = 0;
for (let s = firstDueS; s <= lastDueS; s++) if (!firedSeconds.has(s)) missedOccurrences++;
const ranSources = new Set(dropsRun.map((r) => r.trigger.source));
const missedFiles = [...drops.keys()].filter((path) => !ranSources.has(path)).length;

const stableToStart = dropsRun.map((r) => firstStepStartMs(r) - Date.parse(r.trigger.time));
const droppedToStart = dropsRun.filter((r) => drops.has(r.trigger.source)).map((r) => firstStepStartMs(r) - drops.get(r.trigger.source));
const scheduledToStart = ticks.map((r) => firstStepStartMs(r) - Date.parse(r.trigger.time));

const rssStart = rssSamples[0].mb;
const baseline = rssWarm?.mb ?? rssStart;
const result = {
  bench: 'soak',
  minutes,
  dropEveryMs,
  node: process.version,
  exitCode,
  runsCompleted: finished.length,
  runsSucceeded: finished.filter((event) => event.status === 'succeeded').length,
  scheduledRuns: ticks.length,
  fileRuns: dropsRun.length,
  filesDropped: drops.size,
  duplicateRuns,
  duplicateSideEffects,
  missedOccurrences,
  missedFiles,
  skippedTriggers: triggers.filter((event) => event.action === 'skipped').length,
  latencyMs: {
    fileStableToFirstStepStart: latencySummary(stableToStart),
    fileWrittenToFirstStepStart: latencySummary(droppedToStart),
    scheduledToFirstStepStart: latencySummary(scheduledToStart),
  },
  rssMb: {
    start: rssStart,
    afterWarmup: rssWarm,
    end: rssEnd,
    growthPercentFromStart: rssStart ? Math.round(((rssEnd - rssStart) / rssStart) * 1000) / 10 : null,
    growthPercentFromWarmup: baseline ? Math.round(((rssEnd - baseline) / baseline) * 1000) / 10 : null,
    samples: rssSamples,
  },
  workspace: values.keep ? dir : null,
};

say(`runs completed ${result.runsCompleted} (${result.scheduledRuns} scheduled, ${result.fileRuns} file), succeeded ${result.runsSucceeded}`);
say(`duplicate runs ${duplicateRuns}, duplicate side effects ${duplicateSideEffects}, missed occurrences ${missedOccurrences}, missed files ${missedFiles}`);
say(`latency file stable → first step start: p50 ${result.latencyMs.fileStableToFirstStepStart.p50} ms, p95 ${result.latencyMs.fileStableToFirstStepStart.p95} ms`);
say(`RSS ${rssStart} MB at start, ${baseline} MB after warm-up, ${rssEnd} MB at end`);
if (exitCode !== 0) say(`serve exited ${exitCode}:\n${service.stderr()}`);
if (!values.keep) rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify(result) + '\n');
process.exitCode = duplicateRuns === 0 && missedOccurrences === 0 && missedFiles === 0 && exitCode === 0 ? 0 : 1;
