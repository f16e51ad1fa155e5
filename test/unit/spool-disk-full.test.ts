import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

// A disk that fills up while a payload is spooled: the message still arrives
// (the call does not hang), the partial file is deleted, and saving the result
// fails as storage naming the cause instead of saving the token's own bytes.
const disk = { full: false };
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return {
    ...actual,
    writeSync: (...args: Parameters<typeof actual.writeSync>) => {
      if (disk.full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return actual.writeSync(...args);
    },
  };
});

const { LineBuffer } = await import('../../src/apps/line-buffer.js');
const { claimSpooled, Spool } = await import('../../src/apps/spool.js');

describe('spooling on a full disk', () => {
  it('delivers the message, deletes the partial file, and the claim fails as storage naming ENOSPC', () => {
    const dir = join(fs.mkdtempSync(join(tmpdir(), 'runner-spool-')), 'spool');
    const buffer = new LineBuffer(64 * 1024 * 1024, { spool: new Spool(dir, 1e9), streamAfterBytes: 1024 });
    const data = Buffer.alloc(300_000, 7).toString('base64');
    const line = Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'image', data, mimeType: 'image/png' }] } })}\n`);
    buffer.append(line.subarray(0, 200_000));
    disk.full = true;
    buffer.append(line.subarray(200_000));
    disk.full = false;
    const message = buffer.readMessage() as unknown as { result: { content: { data: string }[] } };
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(() => claimSpooled(message.result.content[0]!.data)).toThrow(expect.objectContaining({ code: 'storage', message: expect.stringMatching(/no space left on device/) }));
  });
});
