import { mkdtempSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/artifacts/atomic-file.js';
import { RunnerError } from '../../src/errors.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'runner-atomic-'));

describe('writeFileAtomic', () => {
  it('replaces the file, makes missing folders with their mode, and leaves no temp file', () => {
    const dir = tempDir();
    const file = join(dir, 'a', 'b', 'state.json');
    writeFileAtomic(file, 'old\n', { mode: 0o600, folderMode: 0o700, durable: true });
    writeFileAtomic(file, Buffer.from('new\n'), { mode: 0o600, folderMode: 0o700, durable: true });
    expect(readFileSync(file, 'utf8')).toBe('new\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'a', 'b')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(dir, 'a', 'b'))).toEqual(['state.json']);
  });

  it('writes a string as UTF-8, a lone surrogate as U+FFFD, as Buffer.from encodes it', () => {
    const file = join(tempDir(), 'text.json');
    const text = `${'é😀 \ud800 x'.repeat(20_000)}\n`;
    writeFileAtomic(file, text);
    expect(readFileSync(file).equals(Buffer.from(text, 'utf8'))).toBe(true);
  });

  it.runIf(process.platform === 'linux')('writes each time to a temp file of its own beside the file, named with the pid and ending in .tmp', () => {
    const file = join(tempDir(), 'state.json');
    const temps = Array.from({ length: 3 }, () => {
      let temp = '';
      writeFileAtomic(file, (fd) => void (temp = readlinkSync(`/proc/self/fd/${fd}`)));
      return temp;
    });
    expect(new Set(temps).size).toBe(3);
    for (const temp of temps) expect(temp.startsWith(`${file}.${process.pid}.`) && temp.endsWith('.tmp')).toBe(true);
  });

  it('hands a writer the temp file descriptor', () => {
    const file = join(tempDir(), 'out.txt');
    writeFileAtomic(file, (fd) => {
      writeFileSync(fd, 'one ');
      writeFileSync(fd, 'two');
    });
    expect(readFileSync(file, 'utf8')).toBe('one two');
  });

  it('keeps the old file and removes the temp file when the writer fails, with a storage error naming the file', () => {
    const dir = tempDir();
    const file = join(dir, 'run.json');
    writeFileAtomic(file, 'kept');
    let error: unknown;
    try {
      writeFileAtomic(file, () => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RunnerError);
    expect(error).toMatchObject({ code: 'storage', message: `cannot write ${file}: no space left on the device (ENOSPC)` });
    expect(readFileSync(file, 'utf8')).toBe('kept');
    expect(readdirSync(dir)).toEqual(['run.json']);
  });
});
