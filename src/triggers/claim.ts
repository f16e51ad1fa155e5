import { access, mkdir, rename } from 'node:fs/promises';
import { basename, dirname, extname, join, relative } from 'node:path';
import type { ClaimFolder } from './excluded-paths.js';

/**
 * `claim: move` (docs/triggers.md, Watch). A claimed file moves, by rename (atomic on one
 * file system), into `processing/` beside the watched folder, and after its
 * run into `done/` or `failed/` next to `processing/`:
 * `artifacts/inbox/a.png` → `artifacts/processing/a.png` → `artifacts/done/a.png`.
 * Of two runner processes renaming the same file, one gets ENOENT: it lost the claim.
 */

/**
 * Where the claim folders of a watched folder go: beside it, unless that
 * would leave the config folder (watching the config folder itself), then inside it.
 */
export function claimRootFor(watchedFolder: string, configDir: string): string {
  const parent = dirname(watchedFolder);
  return relative(configDir, parent).startsWith('..') ? watchedFolder : parent;
}

/** Moves `file` into `<root>/processing/`; undefined when the file is gone (someone else claimed it). */
export async function claimFile(file: string, root: string): Promise<string | undefined> {
  return moveInto(file, join(root, 'processing'));
}

/** Moves a file out of `processing/` into its sibling `done/` or `failed/`; returns the new path. */
export async function releaseClaim(claimed: string, outcome: Exclude<ClaimFolder, 'processing'>): Promise<string | undefined> {
  return moveInto(claimed, join(dirname(dirname(claimed)), outcome));
}

async function moveInto(file: string, folder: string): Promise<string | undefined> {
  await mkdir(folder, { recursive: true });
  const target = await freeName(folder, basename(file));
  try {
    await rename(file, target);
    return target;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** `name`, or `name-2`, `name-3`, ... (before the extension): never replaces a file already there. */
async function freeName(folder: string, name: string): Promise<string> {
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 1; ; n++) {
    const candidate = join(folder, n === 1 ? name : `${stem}-${n}${ext}`);
    try {
      await access(candidate);
    } catch {
      return candidate;
    }
  }
}
