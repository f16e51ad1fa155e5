import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FolderCatchUp } from '../../src/triggers/watch.js';
import { FakeClock } from '../helpers/fake-clock.js';

// chokidar lists a folder that appears, then starts watching it: a file written in between is never
// reported (chokidar issue 1471). FolderCatchUp lists such a folder again and reports what chokidar
// does not know. Real folders and files; chokidar's view (`known`) and the clock are the test's.

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

function setUp(ignored: (path: string) => boolean = () => false) {
  root = mkdtempSync(join(tmpdir(), 'runner-catch-up-'));
  /** chokidar's view: folder → the names it knows there. */
  const known: Record<string, string[]> = {};
  const clock = new FakeClock(0);
  const files: string[] = [];
  const folders: string[] = [];
  const catchUp = new FolderCatchUp({
    clock,
    known: () => known,
    isIgnoredFolder: ignored,
    onFile: (path) => files.push(path),
    onMissedFolder: (path) => folders.push(path),
  });
  return { clock, files, folders, catchUp, known };
}

describe('FolderCatchUp', () => {
  it('reports the files of a new folder that chokidar does not know, a moment after it appeared, and again later', async () => {
    const { clock, files, catchUp, known } = setUp();
    const fresh = join(root, 'new');
    mkdirSync(fresh);
    writeFileSync(join(fresh, 'seen.txt'), 'chokidar reported this one\n');
    writeFileSync(join(fresh, 'missed.txt'), 'written between its listing and its watch\n');
    known[fresh] = ['seen.txt'];
    catchUp.folderAppeared(fresh);

    await clock.advance(249);
    expect(files).toEqual([]);
    await clock.advance(1);
    await expect.poll(() => files).toEqual([join(fresh, 'missed.txt')]);

    writeFileSync(join(fresh, 'later.txt'), 'also missed\n');
    await clock.advance(1_750);
    // In the order the folder lists them; a file reported twice settles once (FileSettler), and its content runs once.
    await expect.poll(() => files.slice(1).sort()).toEqual([join(fresh, 'later.txt'), join(fresh, 'missed.txt')]);
  });

  it('hands a folder chokidar missed altogether to chokidar and reports everything in it, skipping what no glob can reach', async () => {
    const { clock, files, folders, catchUp, known } = setUp((path) => path.endsWith('unreachable'));
    const fresh = join(root, 'new');
    mkdirSync(join(fresh, 'inner', 'deeper'), { recursive: true });
    mkdirSync(join(fresh, 'unreachable'));
    writeFileSync(join(fresh, 'inner', 'a.txt'), 'a\n');
    writeFileSync(join(fresh, 'inner', 'deeper', 'b.txt'), 'b\n');
    writeFileSync(join(fresh, 'unreachable', 'c.txt'), 'c\n');
    known[fresh] = ['unreachable']; // chokidar knows the folder it ignores, not `inner`
    catchUp.folderAppeared(fresh);

    await clock.advance(250);
    await expect.poll(() => files.length).toBe(2);
    expect(folders).toEqual([join(fresh, 'inner'), join(fresh, 'inner', 'deeper')]);
    expect(files.sort()).toEqual([join(fresh, 'inner', 'a.txt'), join(fresh, 'inner', 'deeper', 'b.txt')]);
  });

  it('passes over a folder that is gone again', async () => {
    const { clock, files, catchUp } = setUp();
    catchUp.folderAppeared(join(root, 'gone')); // never made: its listing fails, quietly
    const fresh = join(root, 'new');
    mkdirSync(fresh);
    writeFileSync(join(fresh, 'a.txt'), 'a\n');
    catchUp.folderAppeared(fresh); // listed after the other one, in the same round
    await clock.advance(250);
    await expect.poll(() => files).toEqual([join(fresh, 'a.txt')]);
  });

  it('reports nothing once closed', async () => {
    const { clock, files, catchUp } = setUp();
    const fresh = join(root, 'new');
    mkdirSync(fresh);
    writeFileSync(join(fresh, 'a.txt'), 'a\n');
    catchUp.folderAppeared(fresh);
    catchUp.close();
    await clock.advance(5_000);
    expect(clock.pending).toBe(0);
    expect(files).toEqual([]);
  });
});
