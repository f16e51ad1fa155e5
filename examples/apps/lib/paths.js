// Keep every path a tool touches inside the artifacts root.
import { mkdirSync, realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolError } from './tool-result.js';

/** Create the artifacts root if needed and return its real (symlink-free) path. */
export function prepareRoot(root) {
  try {
    mkdirSync(root, { recursive: true });
    return realpathSync(root);
  } catch (error) {
    throw new Error(`cannot use ${root} as the artifacts folder: ${error.message}`);
  }
}

/**
 * Resolve a tool's path argument (absolute, or relative to the root) to an
 * absolute path inside `realRoot`. Symlinks are resolved on the deepest
 * existing ancestor, so a link pointing out of the root cannot be used to
 * escape it. Throws ToolError otherwise.
 */
export function resolveInsideRoot(realRoot, pathArg, field = 'path') {
  if (typeof pathArg !== 'string' || pathArg.trim() === '' || pathArg.includes('\0')) {
    throw new ToolError(`\`${field}\` must be a non-empty file path`);
  }
  const wanted = resolve(realRoot, pathArg);
  const real = realpathOfExistingPart(wanted);
  if (!isInside(realRoot, real)) {
    throw new ToolError(`path ${pathArg} is outside the artifacts folder ${realRoot}`);
  }
  if (real === realRoot) throw new ToolError(`path ${pathArg} is the artifacts folder itself, not a file`);
  return real;
}

/** Fail with a clear ToolError unless `path` is an existing regular file; returns its size. */
export async function requireFile(path, pathArg = path) {
  const info = await stat(path).catch((error) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw new ToolError(`file not found: ${pathArg}`);
    throw error;
  });
  if (!info.isFile()) throw new ToolError(`expected a file but found a folder: ${pathArg}`);
  return info.size;
}

/** `<dir>/<name><suffix><ext>` beside `path`, with `ext` replacing the original one if given. */
export function siblingPath(path, suffix, ext = extname(path)) {
  return join(dirname(path), basename(path, extname(path)) + suffix + ext);
}

function isInside(root, path) {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

// realpath of the longest existing prefix, plus the not-yet-existing rest.
function realpathOfExistingPart(path) {
  const missing = [];
  let current = path;
  for (;;) {
    try {
      return join(realpathSync(current), ...missing.reverse());
    } catch (error) {
      if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') throw error;
      const parent = dirname(current);
      if (parent === current) return path;
      missing.push(basename(current));
      current = parent;
    }
  }
}
