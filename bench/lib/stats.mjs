// Small numeric helpers for the benchmarks: medians, rounding, load snapshots.
import { loadavg } from 'node:os';

/** The median of a list of numbers (mean of the middle two for an even count). */
export function median(values) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Rounds to `digits` decimals, as a number (for the JSON summary). */
export function round(value, digits = 2) {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** The 1, 5 and 15 minute load averages, rounded, as in `uptime`. */
export function loadAverages() {
  return loadavg().map((value) => round(value, 2));
}

/** "≤ 1.10 met" / "≤ 1.10 MISSED" for a figure against a target; `met: null` when a side was not run. */
export function verdict(value, target, direction) {
  if (Number.isNaN(value)) return { met: null, text: 'n/a: one side only' };
  const met = direction === 'max' ? value <= target : value >= target;
  return { met, text: `${direction === 'max' ? '≤' : '≥'} ${target} ${met ? 'met' : 'MISSED'}` };
}

/** Prints one human-readable line on stdout as the benchmark goes. */
export function say(line) {
  process.stdout.write(`${line}\n`);
}
