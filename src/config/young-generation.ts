import { setFlagsFromString } from 'node:v8';

// Loading a large workflow builds data that lives as long as the workflow:
// nearly every object the parser and the checks make survives. V8 doubles its
// young generation (up to 2 × 16 MiB on 64-bit) each time as many bytes as it
// holds have survived a scavenge, so a 10,000-step file grows it to the
// maximum, and every scavenge then copies a large set of survivors before
// promoting them. Holding the young generation at the size it has while such
// a file loads promotes survivors sooner: the 10,000-step benchmark loads in
// about three quarters of the time and with about 25 MB less peak memory.
// Growth resumes when the load is done. Small files are left alone.

/** Files at least this large are loaded with the young generation held at its size. */
export const HOLD_YOUNG_GENERATION_BYTES = 256 * 1024;

/** V8's own growth factor, restored after the load (unless the process was started with another). */
const DEFAULT_GROWTH_FACTOR = 2;
const GROWTH_FLAG = '--semi-space-growth-factor';

/** Whether the process was started with its own growth factor (then it is not touched). */
const chosenByUser = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((flag) =>
  flag.replaceAll('_', '-').startsWith(GROWTH_FLAG),
);

let depth = 0;

/**
 * Runs `load` (synchronous) with V8's young generation held at its current
 * size when `bytes` is at least HOLD_YOUNG_GENERATION_BYTES. Nested calls
 * hold it once. The flag is process-wide: a worker thread that allocates
 * during the load does not grow its young generation either, which costs it
 * nothing but a few more scavenges.
 */
export function withYoungGenerationHeld<T>(bytes: number, load: () => T): T {
  if (bytes < HOLD_YOUNG_GENERATION_BYTES || chosenByUser) return load();
  if (depth++ === 0) setFlagsFromString(`${GROWTH_FLAG}=1`);
  try {
    return load();
  } finally {
    if (--depth === 0) setFlagsFromString(`${GROWTH_FLAG}=${DEFAULT_GROWTH_FACTOR}`);
  }
}
