// The summary of bench/ab.mjs: per build, the spread of each figure over its
// turns, and in how many pairs the second build came out ahead.
import { median, round } from './stats.mjs';

/** Median, least and most of a list, rounded. */
function spread(values, digits) {
  return { median: round(median(values), digits), min: round(Math.min(...values), digits), max: round(Math.max(...values), digits) };
}

/**
 * `pairs` holds one `{ a, b }` per pair of turns, each side
 * `{ ratio, overheadUsPerCall, cpuUsPerCall }` (ratio: runner/raw throughput,
 * higher is better; overhead: the runner's wall time per call beyond the raw
 * client's, and CPU: lower is better). Returns each side's spreads and the
 * count of pairs where B did better on the ratio and on CPU.
 */
export function summarizePairs(pairs) {
  const side = (key) => ({
    ratio: spread(pairs.map((pair) => pair[key].ratio), 3),
    overheadUsPerCall: spread(pairs.map((pair) => pair[key].overheadUsPerCall), 1),
    cpuUsPerCall: spread(pairs.map((pair) => pair[key].cpuUsPerCall), 1),
  });
  return {
    pairs: pairs.length,
    a: side('a'),
    b: side('b'),
    bRatioHigher: pairs.filter((pair) => pair.b.ratio > pair.a.ratio).length,
    bCpuLower: pairs.filter((pair) => pair.b.cpuUsPerCall < pair.a.cpuUsPerCall).length,
  };
}

/** The summary as lines of text. */
export function formatSummary(summary, names) {
  const row = (name, s) =>
    `${name.padEnd(10)} runner/raw ${s.ratio.median.toFixed(3)} (${s.ratio.min.toFixed(3)}-${s.ratio.max.toFixed(3)})` +
    `   overhead per call ${s.overheadUsPerCall.median.toFixed(1)} us (${s.overheadUsPerCall.min.toFixed(1)}-${s.overheadUsPerCall.max.toFixed(1)})` +
    `   CPU per call ${s.cpuUsPerCall.median.toFixed(1)} us (${s.cpuUsPerCall.min.toFixed(1)}-${s.cpuUsPerCall.max.toFixed(1)})`;
  return [
    row(`A ${names.a}`, summary.a),
    row(`B ${names.b}`, summary.b),
    `B ahead in ${summary.bRatioHigher} of ${summary.pairs} pairs on runner/raw, lower CPU in ${summary.bCpuLower} of ${summary.pairs}`,
  ];
}
