import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

// Across file systems a rename fails with EXDEV: the move copies beside the
// target and renames that into place, so the target is never half-written.
const failRename = { next: '' as string };
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return {
    ...actual,
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      if (failRename.next) {
        const code = failRename.next;
        failRename.next = '';
        throw Object.assign(new Error(`${code}: simulated`), { code });
      }
      return actual.renameSync(from, to);
    },
  };
});

const { moveFileAtomic } = await import('../../src/artifacts/move-file.js');

afterEach(() => {
  failRename.next = '';
});

describe('moveFileAtomic', () => {
  it('copies and deletes the source when the rename crosses file systems (EXDEV)', () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'runner-move-'));
    fs.writeFileSync(join(dir, 'a.part'), 'payload');
    failRename.next = 'EXDEV';
    moveFileAtomic(join(dir, 'a.part'), join(dir, 'image-0.png'));
    expect(fs.readdirSync(dir)).toEqual(['image-0.png']);
    expect(fs.readFileSync(join(dir, 'image-0.png'), 'utf8')).toBe('payload');
  });

  it('fails as storage naming the target, and deletes the source', () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'runner-move-'));
    fs.writeFileSync(join(dir, 'a.part'), 'payload');
    failRename.next = 'EACCES';
    expect(() => moveFileAtomic(join(dir, 'a.part'), join(dir, 'image-0.png'))).toThrow(/cannot write .*image-0\.png: permission denied/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
