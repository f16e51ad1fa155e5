// A full GC between timed repetitions, so one side's garbage is not collected on the other side's clock.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

/** Collects garbage now (untimed). */
export function collectGarbage() {
  gc();
}
