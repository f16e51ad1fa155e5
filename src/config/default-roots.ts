import { statSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The roots an app gets when its config names none: the artifacts folder,
 * then every existing folder named in its `args` (as an argument or as the
 * value of `--flag=value`), relative ones against its `cwd`. A server that
 * replaces the folders it was started with by the client's roots (like
 * server-filesystem) so keeps the ones the user gave it.
 */
export function defaultRoots(artifacts: string, args: readonly string[], cwd: string): string[] {
  const roots = [artifacts];
  for (const arg of args) {
    const candidate = arg.startsWith('-') ? arg.slice(arg.indexOf('=') + 1 || arg.length) : arg;
    if (candidate === '') continue;
    const folder = resolve(cwd, candidate);
    if (!roots.includes(folder) && isFolder(folder)) roots.push(folder);
  }
  return roots;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
