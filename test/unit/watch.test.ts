import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isInClaimFolder, isRunnerOwnedPath, isTempFileName } from '../../src/triggers/excluded-paths.js';
import { collapseEvents, FileSettler, type FileFacts, type SettledFile } from '../../src/triggers/file-settle.js';
import { compileGlob } from '../../src/triggers/glob.js';
import { FakeClock } from '../helpers/fake-clock.js';

describe('watch globs', () => {
  const dir = '/work/project';

  it('watch the static folder a glob starts from, as deep as it can match', () => {
    expect(compileGlob('artifacts/inbox/*.png', dir)).toMatchObject({ base: '/work/project/artifacts/inbox', depth: 0 });
    expect(compileGlob('artifacts/*/in/*.png', dir)).toMatchObject({ base: '/work/project/artifacts', depth: 2 });
    expect(compileGlob('artifacts/**/*.png', dir)).toMatchObject({ base: '/work/project/artifacts', depth: undefined });
    expect(compileGlob('/data/drop/report.csv', dir)).toMatchObject({ base: '/data/drop', depth: 0 });
  });

  it('match like a shell: * and ? stay in one folder and skip dotfiles, ** spans folders', () => {
    const png = { test: compileGlob('artifacts/inbox/*.png', dir).matches };
    expect(png.test('/work/project/artifacts/inbox/logo.png')).toBe(true);
    expect(png.test('/work/project/artifacts/inbox/sub/logo.png')).toBe(false);
    expect(png.test('/work/project/artifacts/inbox/.logo.png')).toBe(false);
    expect(png.test('/work/project/artifacts/inbox/logo.png.tmp')).toBe(false);
    const deep = { test: compileGlob('artifacts/**/*.{png,jpg}', dir).matches };
    expect(deep.test('/work/project/artifacts/a.jpg')).toBe(true);
    expect(deep.test('/work/project/artifacts/x/y/z.png')).toBe(true);
    expect(deep.test('/work/project/artifacts/.runner/z.png')).toBe(false);
    expect(deep.test('/work/project/artifacts/x/z.gif')).toBe(false);
    const classes = { test: compileGlob('in/scan-[0-9]?.[!t]*', dir).matches };
    expect(classes.test('/work/project/in/scan-12.pdf')).toBe(true);
    expect(classes.test('/work/project/in/scan-12.txt')).toBe(false);
    expect(classes.test('/work/project/in/scan-a2.pdf')).toBe(false);
    expect(compileGlob('in/a+b (1).png', dir).matches('/work/project/in/a+b (1).png')).toBe(true);
    expect(compileGlob('in/a+b (1).png', dir).matches('/work/project/in/a+b 1.png')).toBe(false);
  });
});

describe('paths that never trigger', () => {
  const artifacts = '/p/artifacts';

  it('anything in a run folder of any workflow, and the runner state folder', () => {
    expect(isRunnerOwnedPath('/p/artifacts/logo-to-quote/20261130-084541-896-a05b/run.json', artifacts)).toBe(true);
    expect(isRunnerOwnedPath('/p/artifacts/other/20261130-084541-896-a05b/step/image-0.png', artifacts)).toBe(true);
    expect(isRunnerOwnedPath('/p/artifacts/.runner/seen/wf/abc', artifacts)).toBe(true);
    expect(isRunnerOwnedPath('/p/artifacts/inbox/a.png', artifacts)).toBe(false);
    expect(isRunnerOwnedPath('/p/artifacts/inbox-thumbnails/catalog.xlsx', artifacts)).toBe(false);
    expect(isRunnerOwnedPath('/p/elsewhere/20261130-084541-896-a05b/x', artifacts)).toBe(false);
  });

  it('claim folders below the watched folder, and temp files', () => {
    expect(isInClaimFolder('/p/artifacts/inbox/processing/a.png', '/p/artifacts/inbox')).toBe(true);
    expect(isInClaimFolder('/p/artifacts/inbox/sub/done/a.png', '/p/artifacts/inbox')).toBe(true);
    expect(isInClaimFolder('/p/artifacts/inbox/a.png', '/p/artifacts/inbox')).toBe(false);
    expect(isInClaimFolder('/p/done/a.png', '/p/artifacts/inbox')).toBe(false);
    for (const name of ['a.png.tmp', 'a.png~', '~$a.xlsx', 'a.png.part', 'a.png.crdownload']) expect(isTempFileName(join('/x', name))).toBe(true);
    expect(isTempFileName('/x/a.png')).toBe(false);
  });
});

/** A fake file system for the settler: size and mtime per path, changed by the test. */
function fakeFiles() {
  const files = new Map<string, FileFacts>();
  return {
    files,
    write(path: string, size: number, mtimeMs: number) {
      files.set(path, { size, mtimeMs });
    },
    stat: async (path: string) => files.get(path),
  };
}

function startSettler(clock: FakeClock, fs: ReturnType<typeof fakeFiles>, debounceMs = 300) {
  const settled: (SettledFile & { at: number })[] = [];
  const settler = new FileSettler({
    clock,
    debounceMs,
    pollMs: 100,
    stableChecks: 3,
    stat: fs.stat,
    onSettled: (file) => settled.push({ ...file, at: clock.now() }),
  });
  return { settler, settled };
}

describe('a file triggers once, after its writes have finished', () => {
  const start = Date.parse('2026-11-30T08:00:00.000Z');

  it('a file written at once settles after the debounce and the stability checks', async () => {
    const clock = new FakeClock(start);
    const fs = fakeFiles();
    const { settler, settled } = startSettler(clock, fs);
    fs.write('/in/a.png', 10, start);
    settler.push('/in/a.png', 'add');
    await clock.advance(299);
    expect(settled).toEqual([]);
    await clock.advance(1_000);
    // 300 ms debounce, then three equal readings 100 ms apart.
    expect(settled).toEqual([{ path: '/in/a.png', event: 'add', stableAtMs: start + 500, at: start + 500 }]);
    expect(settler.size).toBe(0);
  });

  it('a file written slowly in chunks settles once, after its last chunk', async () => {
    const clock = new FakeClock(start);
    const fs = fakeFiles();
    const { settler, settled } = startSettler(clock, fs);
    fs.write('/in/slow.png', 1, start);
    settler.push('/in/slow.png', 'add');
    for (let chunk = 2; chunk <= 6; chunk++) {
      await clock.advance(200); // chunks arrive faster than the debounce
      fs.write('/in/slow.png', chunk, clock.now());
      settler.push('/in/slow.png', 'change');
    }
    await clock.advance(5_000);
    expect(settled).toEqual([{ path: '/in/slow.png', event: 'add', stableAtMs: start + 1_000 + 500, at: start + 1_500 }]);
  });

  it('a writer that pauses longer than the debounce is still waited for while size or mtime move', async () => {
    const clock = new FakeClock(start);
    const fs = fakeFiles();
    const { settler, settled } = startSettler(clock, fs, 100);
    fs.write('/in/big.bin', 1, start);
    settler.push('/in/big.bin', 'add');
    await clock.advance(150); // debounce over; first reading taken
    fs.write('/in/big.bin', 2, clock.now()); // a write without an event yet
    await clock.advance(150);
    expect(settled).toEqual([]);
    await clock.advance(1_000);
    expect(settled).toHaveLength(1);
  });

  it('a file that is gone before it settles never triggers', async () => {
    const clock = new FakeClock(start);
    const fs = fakeFiles();
    const { settler, settled } = startSettler(clock, fs);
    fs.write('/in/a.png', 10, start);
    settler.push('/in/a.png', 'add');
    await clock.advance(350);
    fs.files.delete('/in/a.png');
    await clock.advance(1_000);
    expect(settled).toEqual([]);
    expect(settler.size).toBe(0);
  });

  it('collapses bursts: add+change is add, change+unlink is unlink, add+unlink is nothing', () => {
    expect(collapseEvents({ first: 'add', last: 'change', sawAdd: true })).toBe('add');
    expect(collapseEvents({ first: 'change', last: 'change', sawAdd: false })).toBe('change');
    expect(collapseEvents({ first: 'change', last: 'unlink', sawAdd: false })).toBe('unlink');
    expect(collapseEvents({ first: 'add', last: 'unlink', sawAdd: true })).toBeUndefined();
    expect(collapseEvents({ first: 'unlink', last: 'add', sawAdd: true })).toBe('add');
  });

  it('reports an unlink after the debounce, without reading the file', async () => {
    const clock = new FakeClock(start);
    const fs = fakeFiles();
    const { settler, settled } = startSettler(clock, fs);
    settler.push('/in/gone.png', 'unlink');
    await clock.advance(300);
    expect(settled).toEqual([{ path: '/in/gone.png', event: 'unlink', stableAtMs: start + 300, at: start + 300 }]);
  });

  it('close drops pending files and leaves no timer behind', async () => {
    const clock = new FakeClock(start);
    const fs = fakeFiles();
    const { settler, settled } = startSettler(clock, fs);
    fs.write('/in/a.png', 10, start);
    settler.push('/in/a.png', 'add');
    await clock.advance(100);
    settler.close();
    await clock.advance(5_000);
    expect(settled).toEqual([]);
    expect(clock.pending).toBe(0);
  });
});

describe('watch globs: odd folders', () => {
  it('takes wildcards from the glob only, never from the config folder, and resolves ..', () => {
    const glob = compileGlob('inbox/*.png', '/work/my[odd]{dir}');
    expect(glob).toMatchObject({ base: '/work/my[odd]{dir}/inbox', depth: 0 });
    expect(glob.matches('/work/my[odd]{dir}/inbox/a.png')).toBe(true);
    expect(compileGlob('../shared/./drop/*.csv', '/work/project')).toMatchObject({ base: '/work/shared/drop' });
  });
});
