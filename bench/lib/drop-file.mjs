// How the soak and (j) put files into a watched folder, the two ways apps do:
// written elsewhere and renamed in whole, or written in place a part at a time.
import { closeSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Pause between the parts of a file written in place. */
const PART_GAP_MS = 40;

/**
 * Puts `content` into `inbox/name`: renamed in from `staging`, or with
 * `inPlace`, written there in three parts PART_GAP_MS apart. Resolves with
 * the file's path and when its last byte was written (ms since the epoch).
 */
export async function dropFile({ inbox, staging, name, content, inPlace = false }) {
  const path = join(inbox, name);
  if (inPlace) {
    const fd = openSync(path, 'w');
    try {
      for (let part = 0; part < 3; part++) {
        writeSync(fd, content.slice((part * content.length) / 3, ((part + 1) * content.length) / 3));
        if (part < 2) await sleep(PART_GAP_MS);
      }
    } finally {
      closeSync(fd);
    }
  } else {
    writeFileSync(join(staging, name), content);
    renameSync(join(staging, name), path);
  }
  return { path, writtenAt: Date.now() };
}
