// Runs several sides of a benchmark in alternating order, so drift in machine
// load hits every side alike, with one untimed warm-up round (JIT, caches).
import { collectGarbage } from './gc.mjs';
import { cpuMsSince } from './engine.mjs';
import { median, round } from './stats.mjs';

/**
 * `sides` maps a name to `async () => ({ ms, cpuMs? })` or `async () => ms`.
 * Returns per side: every timed run's wall and CPU ms, and their medians.
 */
export async function measureInterleaved(sides, reps) {
  const names = Object.keys(sides);
  const runs = Object.fromEntries(names.map((name) => [name, { ms: [], cpuMs: [] }]));
  for (let rep = -1; rep < reps; rep++) {
    const order = rep % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      collectGarbage();
      const cpuBefore = process.cpuUsage();
      const outcome = await sides[name]();
      const cpuMs = cpuMsSince(cpuBefore);
      if (rep < 0) continue;
      runs[name].ms.push(typeof outcome === 'number' ? outcome : outcome.ms);
      runs[name].cpuMs.push(typeof outcome === 'number' ? cpuMs : (outcome.cpuMs ?? cpuMs));
    }
  }
  return Object.fromEntries(
    names.map((name) => [
      name,
      { ms: median(runs[name].ms), cpuMs: median(runs[name].cpuMs), runsMs: runs[name].ms.map((ms) => round(ms, 1)), runsCpuMs: runs[name].cpuMs.map((ms) => round(ms, 1)) },
    ]),
  );
}
