import { watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * Calls `onWrite` each time `file` is written: replaced by a rename (how
 * runner writes run.json) or changed in place. It watches the file's folder,
 * so a file that does not exist yet is seen when it appears. Returns the
 * function that stops watching.
 *
 * Watching is only a shortcut: the caller still looks on its own schedule.
 * Where the folder cannot be watched (it is gone, the system has no watches
 * left), or the watch fails later, nothing is called and nothing is thrown.
 */
export function watchFileWrites(file: string, onWrite: () => void): () => void {
  const name = basename(file);
  try {
    const watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
      // Some platforms do not say which file changed: then any change counts.
      if (changed === null || String(changed) === name) onWrite();
    });
    watcher.on('error', () => watcher.close());
    return () => watcher.close();
  } catch {
    return () => {};
  }
}
