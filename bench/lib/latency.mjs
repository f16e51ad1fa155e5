// Trigger latency from run records, for `bench/soak.mjs` and (j): the records
// of a workflow's runs, when a run's first step started, and nearest-rank
// percentiles of a list of latencies.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The run.json of every run in a workflow's folder (`artifacts/<workflow>`); none when it has no folder. */
export function readRunRecords(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .map((id) => join(folder, id, 'run.json'))
    .filter((file) => existsSync(file))
    .map((file) => JSON.parse(readFileSync(file, 'utf8')));
}

/** When the first step of a run record started, in ms since the epoch (Infinity when none started). */
export function firstStepStartMs(record) {
  return Math.min(...record.steps.filter((step) => step.startedAt).map((step) => Date.parse(step.startedAt)));
}

/** The nearest-rank percentile `p` (0 to 100) of `values`; null for an empty list. */
export function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** p50, p95 and the largest of a list of latencies, and how many there are. */
export function latencySummary(values) {
  return { p50: percentile(values, 50), p95: percentile(values, 95), max: values.length ? Math.max(...values) : null, n: values.length };
}
