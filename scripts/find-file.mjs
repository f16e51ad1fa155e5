// A helper the scripts and the benchmarks share.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The first file called `name` under `dir`, depth first; undefined when there is none. */
export function findFile(dir, name) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isFile() && entry.name === name) return path;
    if (entry.isDirectory()) {
      const found = findFile(path, name);
      if (found) return found;
    }
  }
  return undefined;
}
