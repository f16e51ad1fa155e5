import { isAbsolute, resolve, sep } from 'node:path';

// chokidar 4+ watches folders, not globs: each watch glob becomes the static
// folder it starts from (watched), a depth limit, and a matcher for the paths
// events report. Node 20's path.matchesGlob is experimental and prints a
// warning, so globs compile to a RegExp here: `*`, `?`, `**`, `[...]`, `{a,b}`.

/** A watch glob, compiled. */
export interface CompiledGlob {
  /** The glob as written. */
  glob: string;
  /** Absolute folder the glob starts from: the part before the first wildcard. */
  base: string;
  /** How many folder levels below `base` can match; undefined with `**`. */
  depth: number | undefined;
  /** Matches absolute paths. */
  regex: RegExp;
}

const WILDCARD = /[*?[{]/;

/** Compiles `glob` (absolute, or relative to `dir`). `*` and `?` never match a leading dot, as in shells. */
export function compileGlob(glob: string, dir: string): CompiledGlob {
  // Wildcards are looked for in the glob only: `dir` may well contain `[` or `{`. Globs use `/`.
  const segments = glob.split('/').filter((segment, i) => segment !== '' || i === 0);
  const firstWild = segments.findIndex((segment) => WILDCARD.test(segment));
  const split = firstWild === -1 ? segments.length - 1 : firstWild;
  const base = resolve(dir, ...(isAbsolute(glob) ? [sep] : []), ...segments.slice(0, split));
  const rest = segments.slice(split);
  let source = `^${escapeRegex(base === sep ? '' : base)}`;
  for (const segment of rest) {
    source += segment === '**' ? `(?:${escapeRegex(sep)}(?!\\.)[^${escapeClass(sep)}]+)*` : `${escapeRegex(sep)}${segmentToRegex(segment)}`;
  }
  return {
    glob,
    base,
    depth: rest.includes('**') ? undefined : rest.length - 1,
    regex: new RegExp(`${source}$`),
  };
}

/** Whether any of the globs matches the absolute `path`. */
export function matchesAnyGlob(globs: readonly CompiledGlob[], path: string): boolean {
  return globs.some((glob) => glob.regex.test(path));
}

/** One path segment of a glob as a RegExp source (no separators inside). */
function segmentToRegex(segment: string): string {
  const notSep = `[^${escapeClass(sep)}]`;
  let out = /^[*?[{]/.test(segment) ? '(?!\\.)' : '';
  let braces = 0;
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i]!;
    if (char === '*') {
      while (segment[i + 1] === '*') i++;
      out += `${notSep}*`;
    } else if (char === '?') {
      out += notSep;
    } else if (char === '[') {
      const close = segment.indexOf(']', i + 2);
      if (close === -1) {
        out += '\\[';
        continue;
      }
      let body = segment.slice(i + 1, close);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      out += `[${negated ? '^' : ''}${body.replace(/\\/g, '\\\\').replace(/\]/g, '\\]')}]`;
      i = close;
    } else if (char === '{') {
      braces++;
      out += '(?:';
    } else if (char === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (char === ',' && braces > 0) {
      out += '|';
    } else if (char === '\\' && i + 1 < segment.length) {
      out += escapeRegex(segment[++i]!);
    } else {
      out += escapeRegex(char);
    }
  }
  return out + ')'.repeat(braces);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function escapeClass(text: string): string {
  return text.replace(/[\]\\^-]/g, '\\$&');
}
