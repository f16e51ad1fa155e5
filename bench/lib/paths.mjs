// Paths the benchmarks share.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The fixture app both sides call: `echo {text, delayMs}`, no I/O on its hot path. */
export const faultyApp = join(repoRoot, 'test', 'apps', 'faulty.js');
