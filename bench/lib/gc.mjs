// A full GC between timed repetitions, so one side's garbage is not collected on the other side's clock;
// and what a run leaves in the old generation for the next full GC (bench/README.md, twenty-third session).
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

/** Collects garbage now (untimed). */
export function collectGarbage() {
  gc();
}

function oldSpaceUsedBytes() {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size;
}

/**
 * Runs `run` once (untimed) and measures the old generation around it: a
 * full GC before; after it, two minor GCs (what died young is gone) and then
 * a full one. `deadBytes` is what reached the old generation during the run
 * (promoted by a scavenge, or allocated there) and was dead by the next full
 * GC; `keptBytes` what is still alive then.
 */
export async function measureOldGarbage(run) {
  gc();
  const before = oldSpaceUsedBytes();
  const result = await run();
  gc({ type: 'minor' });
  gc({ type: 'minor' });
  const afterRun = oldSpaceUsedBytes();
  gc();
  const kept = oldSpaceUsedBytes();
  return { deadBytes: afterRun - kept, keptBytes: kept - before, result };
}
