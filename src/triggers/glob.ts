import { isAbsolute, relative, resolve, sep } from 'node:path';
import picomatch from 'picomatch';

// chokidar 4+ watches folders, not globs: each watch glob becomes the static
// folder it starts from (watched), a depth limit, and a matcher (picomatch,
// the matcher chokidar's own ecosystem uses) for the paths events report:
// `*`, `?`, `**`, `[...]`, `{a,b}`; `*` and `?` never match a leading dot.

/** A watch glob, compiled. */
export interface CompiledGlob {
  /** The glob as written. */
  glob: string;
  /** Absolute folder the glob starts from: the part before the first wildcard. */
  base: string;
  /** How many folder levels below `base` can match; undefined with `**`. */
  depth: number | undefined;
  /** Whether the absolute `path` matches. */
  matches(path: string): boolean;
}

const WILDCARD = /[*?[{]/;

/** Compiles `glob` (absolute, or relative to `dir`). Globs use `/`. */
export function compileGlob(glob: string, dir: string): CompiledGlob {
  // Wildcards are looked for in the glob only: `dir` may well contain `[` or `{`.
  const segments = glob.split('/').filter((segment, i) => segment !== '' || i === 0);
  const firstWild = segments.findIndex((segment) => WILDCARD.test(segment));
  const split = firstWild === -1 ? segments.length - 1 : firstWild;
  const base = resolve(dir, ...(isAbsolute(glob) ? [sep] : []), ...segments.slice(0, split));
  const rest = segments.slice(split);
  const isMatch = picomatch(toPicomatch(rest.join('/')), { dot: false });
  return {
    glob,
    base,
    depth: rest.includes('**') ? undefined : rest.length - 1,
    matches: (path) => {
      const inside = relative(base, path);
      if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) return false;
      return isMatch(sep === '/' ? inside : inside.split(sep).join('/'));
    },
  };
}


/**
 * The glob in picomatch's terms, as a shell reads it: `[!...]` negates a
 * class (picomatch's `[^...]`), and parentheses are literal (picomatch would
 * make them a group, so `a (1).png` would match `a 1.png`).
 */
function toPicomatch(glob: string): string {
  return glob.replace(/(^|[^\\])\[!/g, '$1[^').replace(/(?<!\\)[()]/g, '\\$&');
}
