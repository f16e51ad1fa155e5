import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Creates `file` with `content` unless it exists: `open(..., 'wx')` is
 * O_CREAT|O_EXCL, so of several processes racing for the same name exactly one
 * wins, on one machine or on a shared local folder. Resolves false for the losers.
 */
export async function createExclusive(file: string, content: string): Promise<boolean> {
  await mkdir(dirname(file), { recursive: true });
  let handle;
  try {
    handle = await open(file, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
  return true;
}
