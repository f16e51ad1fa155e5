import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { extensionFor, fileNameForUri, sanitizeFileName } from '../../src/artifacts/file-names.js';
import { createRunId } from '../../src/artifacts/run-id.js';
import { outputsOf, saveResult, textOf } from '../../src/artifacts/save-result.js';

describe('file names', () => {
  it('maps MIME types to extensions', () => {
    expect(extensionFor('image/png')).toBe('png');
    expect(extensionFor('image/jpeg; charset=binary')).toBe('jpg');
    expect(extensionFor('audio/wav')).toBe('wav');
    expect(extensionFor('application/x-weird+thing')).toBe('bin');
    expect(extensionFor(undefined)).toBe('bin');
  });
  it('never lets a name leave its folder', () => {
    expect(sanitizeFileName('../../etc/passwd', 'f')).toBe('passwd');
    expect(sanitizeFileName('..', 'fallback')).toBe('fallback');
    expect(sanitizeFileName('a b/c?d*.png', 'f')).toBe('c_d_.png');
    expect(sanitizeFileName('.hidden', 'f')).toBe('hidden');
    expect(sanitizeFileName('x'.repeat(300) + '.png', 'f')).toHaveLength(100);
  });
  it('names files after resource URIs, adding the extension when missing', () => {
    expect(fileNameForUri('file:///tmp/report%20final.pdf', 'application/pdf', 'r')).toBe('report_final.pdf');
    expect(fileNameForUri('demo://resource/static/1', 'text/plain', 'r')).toBe('1.txt');
    expect(fileNameForUri('demo://x/', undefined, 'link-0')).toBe('link-0.bin');
  });
});

describe('createRunId', () => {
  it('sorts by time', () => {
    const a = createRunId(Date.UTC(2026, 10, 30, 8, 0, 0, 5));
    const b = createRunId(Date.UTC(2026, 10, 30, 8, 0, 0, 17));
    const c = createRunId(Date.UTC(2026, 11, 1, 0, 0, 0, 0));
    expect(a).toMatch(/^20261130-080000-005-[0-9a-f]{4}$/);
    expect([c, b, a].sort()).toEqual([a, b, c]);
  });
});

describe('saveResult', () => {
  const png = Buffer.from('89504e470d0a1a0a', 'hex');
  it('writes binary content as files and keeps result.json free of it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'runner-save-')), 'step');
    const links: string[] = [];
    const saved = await saveResult(
      dir,
      {
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
          { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
          { type: 'audio', data: Buffer.from('RIFF').toString('base64'), mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'x://docs/../../evil.pdf', mimeType: 'application/pdf', blob: Buffer.from('%PDF').toString('base64') } },
          { type: 'resource_link', uri: 'x://files/report.txt', name: 'report' },
        ],
      },
      async (uri) => {
        links.push(uri);
        return { contents: [{ uri, mimeType: 'text/plain', text: 'report body' }] };
      },
    );
    expect(links).toEqual(['x://files/report.txt']);
    expect(readdirSync(dir).sort()).toEqual(['audio-3.wav', 'evil.pdf', 'image-1.png', 'image-2.png', 'report.txt', 'result.json']);
    expect(saved.files.map((file) => file.slice(dir.length + 1))).toEqual(['image-1.png', 'image-2.png', 'audio-3.wav', 'evil.pdf', 'report.txt']);
    expect(readFileSync(join(dir, 'report.txt'), 'utf8')).toBe('report body');
    const stored = readFileSync(join(dir, 'result.json'), 'utf8');
    expect(stored).not.toContain(png.toString('base64'));
    expect(JSON.parse(stored).content[1]).toEqual({ type: 'image', mimeType: 'image/png', file: 'image-1.png', bytes: 8 });
    expect(existsSync(join(dir, '..', 'evil.pdf'))).toBe(false);
  });
  it('records a link that cannot be read instead of failing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-save-'));
    const saved = await saveResult(dir, { content: [{ type: 'resource_link', uri: 'x://gone', name: 'gone' }] }, async () => {
      throw new Error('no such resource');
    });
    expect(saved.files).toEqual([]);
    expect((saved.stored as { content: { readError: string }[] }).content[0]!.readError).toBe('no such resource');
  });
  it('stops at 1,000 files when the parts of linked resources take a result past it, saving no further part', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-save-'));
    const link = (n: number) => ({ type: 'resource_link' as const, uri: `x://r${n}`, name: `r${n}` });
    const parts = (uri: string) => ({ contents: Array.from({ length: 600 }, (_, i) => ({ uri: `${uri}/${i}.txt`, text: 'x' })) });
    const saving = saveResult(dir, { content: [link(1), link(2)] }, async (uri) => parts(uri));
    await expect(saving).rejects.toMatchObject({
      kind: 'protocol',
      message: 'the result was refused: it has more than 1000 files to save (images, audio, blobs and the parts of the resources it links to), and one result may have at most 1000',
    });
    expect(readdirSync(dir)).toHaveLength(600); // the first link's parts, written before the second was read
  });
});

describe('outputs and text', () => {
  it('prefer structuredContent, else the JSON of a single text block', () => {
    expect(outputsOf({ content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { b: 2 } })).toEqual({ b: 2 });
    expect(outputsOf({ content: [{ type: 'text', text: '{"a":1}' }] })).toEqual({ a: 1 });
    expect(outputsOf({ content: [{ type: 'text', text: 'plain' }] })).toBeNull();
    expect(outputsOf({ content: [{ type: 'text', text: '1' }, { type: 'text', text: '2' }] })).toBeNull();
    expect(textOf({ content: [{ type: 'text', text: 'a' }, { type: 'image', data: '', mimeType: 'image/png' }, { type: 'text', text: 'b' }] })).toBe('a\nb');
  });
});
