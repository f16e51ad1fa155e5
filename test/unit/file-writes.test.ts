import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { watchFileWrites } from '../../src/triggers/file-writes.js';

/** Resolves at the next write `watchFileWrites` reports; the test's timeout bounds the wait. */
function nextWrite(file: string): { seen: Promise<void>; stop: () => void; count: () => number } {
  let count = 0;
  let resolve!: () => void;
  const seen = new Promise<void>((done) => (resolve = done));
  const stop = watchFileWrites(file, () => {
    count++;
    resolve();
  });
  return { seen, stop, count: () => count };
}

describe('watchFileWrites', () => {
  it('reports a file replaced by a rename, as runner writes run.json, and a file written in place', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-writes-'));
    try {
      const file = join(dir, 'run.json');
      const renamed = nextWrite(file);
      writeFileSync(join(dir, 'run.json.tmp'), '{}');
      renameSync(join(dir, 'run.json.tmp'), file);
      await renamed.seen;
      renamed.stop();

      const inPlace = nextWrite(file);
      writeFileSync(file, '{"a":1}');
      await inPlace.seen;
      inPlace.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ignores the other files of the folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-writes-'));
    try {
      const watched = nextWrite(join(dir, 'run.json'));
      // A fence: the other folder's watcher sees its write after the kernel queued the events before it.
      const fence = nextWrite(join(dir, 'fence'));
      writeFileSync(join(dir, 'report.html'), 'x');
      writeFileSync(join(dir, 'fence'), 'x');
      await fence.seen;
      expect(watched.count()).toBe(0);
      watched.stop();
      fence.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('watches nothing, and throws nothing, where the folder does not exist', () => {
    const stop = watchFileWrites(join(tmpdir(), 'runner-no-such-folder', 'run.json'), () => {
      throw new Error('called');
    });
    expect(stop).toBeTypeOf('function');
    stop();
  });
});
