import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CappedLog } from '../../src/apps/capped-log.js';
import { formatBytes, parseSize } from '../../src/config/sizes.js';

describe('CappedLog', () => {
  it('keeps the beginning, a marker and the end of a flood, within the limit', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'runner-log-')), 'logs', 'app.log');
    const log = new CappedLog(file, 100_000, () => {});
    log.write('BEGIN\n');
    const line = `${'x'.repeat(99)}\n`;
    for (let i = 0; i < 50_000; i++) log.write(line); // 5 MB, without ever holding it
    log.write('\rprogress 100%'); // no newline at the end
    log.write('END\n');
    await log.end();
    const text = readFileSync(file, 'utf8');
    expect(statSync(file).size).toBeLessThan(100_000 + 200);
    expect(text.startsWith('BEGIN\n')).toBe(true);
    expect(text).toMatch(/\[runner: 4\.\dMiB of this app's stderr left out here \(max-log\); the last part follows\]/);
    expect(text.endsWith('progress 100%END\n')).toBe(true);
  });

  it('writes a short log as it is, with no marker', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'runner-log-')), 'app.log');
    const log = new CappedLog(file, 1024, () => {});
    log.write('one\n');
    log.write('two\n');
    await log.end();
    expect(readFileSync(file, 'utf8')).toBe('one\ntwo\n');
  });
});

describe('sizes', () => {
  it.each([
    ['10MiB', 10 * 1024 * 1024],
    ['512KiB', 512 * 1024],
    ['64MB', 64_000_000],
    ['1.5GiB', 1.5 * 1024 ** 3],
    ['100B', 100],
  ])('reads %s as %i bytes', (text, bytes) => expect(parseSize(text)).toBe(bytes));
  it.each(['10', '10 MiB', 'ten MiB', '-1MiB', '1TB'])('rejects %j', (text) => expect(parseSize(text)).toBeUndefined());
  it('formats bytes for messages', () => expect(formatBytes(10 * 1024 * 1024)).toBe('10MiB'));
});
