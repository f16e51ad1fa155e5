import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { saveResult } from '../../src/artifacts/save-result.js';
import { LineBuffer, MessageTooLargeError } from '../../src/apps/line-buffer.js';
import { claimSpooled, INVALID_BASE64_TOKEN, Spool } from '../../src/apps/spool.js';
import { RunnerError } from '../../src/errors.js';

// Large base64 payloads of a result streamed into spool files: the message
// carries a token that is valid base64 (the SDK runs atob on it), saveResult
// claims the token and moves the file. Whatever goes wrong, no file is left.

const LIMIT = 64 * 1024 * 1024;

/** Deterministic bytes, so a saved file can be compared. */
function payload(bytes: number, seed = 1): Buffer {
  const data = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i++) data[i] = (i * 31 + seed * 7) & 255;
  return data;
}

function createSpool(capBytes = 4 * LIMIT) {
  const dir = join(mkdtempSync(join(tmpdir(), 'runner-spool-')), '.runner', 'spool');
  return { dir, spool: new Spool(dir, capBytes) };
}

/** Feeds one message line to a LineBuffer in 64 KiB chunks (incremental from 1 KiB) and reads it. */
function feed(buffer: LineBuffer, line: string): JSONRPCMessage | null {
  const bytes = Buffer.from(`${line}\n`);
  for (let i = 0; i < bytes.length; i += 65_536) buffer.append(bytes.subarray(i, i + 65_536));
  return buffer.readMessage();
}

/** The fields of a delivered result these tests read (blocks of every kind are looked at through one shape). */
interface Delivered {
  result: CallToolResult & {
    content: { data: string; text: string; resource: { blob: string } }[];
    contents: { blob: string }[];
    structuredContent: { data: string };
  };
}

/** The result a line delivers. */
function deliver(buffer: LineBuffer, line: string): Delivered {
  const message = feed(buffer, line);
  if (!message || !('result' in message)) throw new Error(`no result was delivered: ${JSON.stringify(message)}`);
  return message as unknown as Delivered;
}

const callResult = (content: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content } });
const streaming = (spool: Spool, maxBytes = LIMIT) => new LineBuffer(maxBytes, { spool, streamAfterBytes: 1024 });

describe('spooling base64 payloads', () => {
  it('decodes an image into a spool file; the token is valid base64 and claims the file once', () => {
    const { dir, spool } = createSpool();
    const image = payload(300_000);
    const message = deliver(streaming(spool), callResult([{ type: 'image', data: image.toString('base64'), mimeType: 'image/png' }]));
    const token = message.result.content[0].data;
    expect(token.length).toBeLessThan(100);
    expect(() => atob(token)).not.toThrow();
    const files = readdirSync(dir);
    expect(files).toEqual([expect.stringMatching(new RegExp(`^${process.pid}-[0-9a-f]+\\.part$`))]);
    const claimed = claimSpooled(token);
    expect(claimed).toEqual({ path: join(dir, files[0]!), bytes: image.length });
    expect(readFileSync(claimed!.path).equals(image)).toBe(true);
    expect(claimSpooled(token)).toBeUndefined();
    expect(spool.unclaimedBytes).toBe(0);
  });

  it('spools embedded resource blobs and resources/read blobs, not other strings nor short ones', () => {
    const { spool } = createSpool();
    const blob = payload(100_000, 2).toString('base64');
    const buffer = streaming(spool);
    const embedded = deliver(buffer, callResult([
      { type: 'resource', resource: { uri: 'x://a.pdf', blob } },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      { type: 'text', text: blob },
    ]));
    expect(claimSpooled(embedded.result.content[0].resource.blob)?.bytes).toBe(100_000);
    expect(embedded.result.content[1].data).toBe('iVBORw0KGgo=');
    expect(embedded.result.content[2].text).toBe(blob);
    const read = deliver(buffer, JSON.stringify({ jsonrpc: '2.0', id: 2, result: { contents: [{ uri: 'x://b', blob }], structuredContent: { data: blob } } }));
    expect(claimSpooled(read.result.contents[0].blob)?.bytes).toBe(100_000);
    expect(read.result.structuredContent.data).toBe(blob);
  });

  it('keeps a payload in the message when its line ends before the switch to incremental parsing', () => {
    const { dir, spool } = createSpool();
    const data = payload(100_000).toString('base64');
    const message = deliver(new LineBuffer(LIMIT, { spool }), callResult([{ type: 'image', data, mimeType: 'image/png' }]));
    expect(message.result.content[0].data).toBe(data);
    expect(existsSync(dir)).toBe(false);
  });

  it('accepts what atob accepts: whitespace, escaped slashes, no padding', () => {
    const { spool } = createSpool();
    const image = payload(100_001, 3); // 100,001 bytes: base64 ends in `=` padding, or 2 characters unpadded
    const base64 = image.toString('base64');
    const variants = [
      base64,
      base64.replace(/=+$/, ''),
      base64.replace(/(.{76})/g, '$1\r\n'),
      `  ${base64.replace(/(.{1000})/g, '$1 ')}\t`,
    ];
    for (const data of variants) {
      const line = callResult([{ type: 'image', data, mimeType: 'image/png' }]).replaceAll('/', '\\/');
      const token = deliver(streaming(spool), line).result.content[0].data;
      expect(() => atob(data)).not.toThrow();
      const claimed = claimSpooled(token)!;
      expect(readFileSync(claimed.path).equals(image), JSON.stringify(data.slice(-10))).toBe(true);
      expect(claimed.bytes).toBe(image.length);
    }
  });

  it('puts an invalid token in place of invalid base64, as atob would reject it, and leaves no file', () => {
    const { dir, spool } = createSpool();
    const base64 = payload(100_000, 4).toString('base64');
    const invalid = [
      `${base64.slice(0, 50_000)}!${base64.slice(50_001)}`,
      `${base64.slice(0, 50_000)}=${base64.slice(50_001)}`,
      base64.replaceAll('+', '-'),
      `${base64}A`, // one character over
      `${base64.slice(0, -4)}A===`,
      `${base64.slice(0, -4)}AB=`,
    ];
    for (const data of invalid) {
      expect(() => atob(data), data.slice(-10)).toThrow();
      const token = deliver(streaming(spool), callResult([{ type: 'image', data, mimeType: 'image/png' }])).result.content[0].data;
      expect(token).toBe(INVALID_BASE64_TOKEN);
      expect(() => atob(token)).toThrow();
      expect(claimSpooled(token)).toBeUndefined();
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('deletes the file of a line that turns out not to be JSON, not to be JSON-RPC, or too large', () => {
    const { dir, spool } = createSpool();
    const data = payload(200_000).toString('base64');
    const buffer = streaming(spool, 1_000_000);
    expect(feed(buffer, `${callResult([{ type: 'image', data, mimeType: 'image/png' }])} trailing junk`)).toBeNull();
    expect(() => feed(buffer, JSON.stringify({ result: { content: [{ type: 'image', data }] } }))).toThrow();
    expect(() => feed(buffer, callResult([{ type: 'image', data: `${data}${data}${data}${data}${data}`, mimeType: 'image/png' }]))).toThrow(MessageTooLargeError);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('deletes unclaimed files on close; a claim after that fails as storage, naming why', () => {
    const { dir, spool } = createSpool();
    const token = deliver(streaming(spool), callResult([{ type: 'image', data: payload(100_000).toString('base64'), mimeType: 'image/png' }])).result.content[0].data;
    spool.close();
    expect(readdirSync(dir)).toEqual([]);
    expect(() => claimSpooled(token)).toThrow(RunnerError);
    expect(() => claimSpooled(token)).not.toThrow(); // told once; then it is just a string
  });

  it('keeps at most its cap of unclaimed bytes: the oldest files go first', () => {
    const { dir, spool } = createSpool(250_000);
    const buffer = streaming(spool);
    const tokens = [1, 2, 3].map((seed) => deliver(buffer, callResult([{ type: 'image', data: payload(100_000, seed).toString('base64'), mimeType: 'image/png' }])).result.content[0].data);
    expect(readdirSync(dir)).toHaveLength(2);
    expect(spool.unclaimedBytes).toBe(200_000);
    expect(() => claimSpooled(tokens[0])).toThrow(/more than 244.1KiB of this app's payloads/);
    expect(readFileSync(claimSpooled(tokens[2])!.path).equals(payload(100_000, 3))).toBe(true);
  });

  it('cannot be claimed with a forged token', () => {
    const forged = Buffer.from(`runner-spool:${crypto.randomUUID()}`).toString('base64');
    expect(claimSpooled(forged)).toBeUndefined();
    expect(claimSpooled(12)).toBeUndefined();
  });

  it('sweeps the files of dead runners when the folder is first used, keeping live ones', () => {
    const { dir, spool } = createSpool();
    mkdirSync(dir, { recursive: true });
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(gone.stdout);
    writeFileSync(join(dir, `${deadPid}-abc.part`), 'stale');
    writeFileSync(join(dir, `${process.ppid}-def.part`), 'a live runner');
    writeFileSync(join(dir, 'unrelated.txt'), 'not ours');
    const writer = spool.open();
    expect(readdirSync(dir).sort()).toEqual([`${process.ppid}-def.part`, writer.path.slice(dir.length + 1), 'unrelated.txt'].sort());
    writer.discard();
  });

  it('saveResult moves a claimed file into the step folder; result.json looks as it always did', async () => {
    const { dir, spool } = createSpool();
    const image = payload(150_000, 5);
    const pdf = payload(90_000, 6);
    const message = deliver(streaming(spool), callResult([
      { type: 'image', data: image.toString('base64'), mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'x://docs/report.pdf', mimeType: 'application/pdf', blob: pdf.toString('base64') } },
    ]));
    const stepDir = join(mkdtempSync(join(tmpdir(), 'runner-save-')), 'step');
    const saved = await saveResult(stepDir, message.result);
    expect(readdirSync(stepDir).sort()).toEqual(['image-0.png', 'report.pdf', 'result.json']);
    expect(readFileSync(join(stepDir, 'image-0.png')).equals(image)).toBe(true);
    expect(readFileSync(join(stepDir, 'report.pdf')).equals(pdf)).toBe(true);
    expect(JSON.parse(readFileSync(join(stepDir, 'result.json'), 'utf8')).content).toEqual([
      { type: 'image', mimeType: 'image/png', file: 'image-0.png', bytes: 150_000 },
      { type: 'resource', resource: { uri: 'x://docs/report.pdf', mimeType: 'application/pdf', file: 'report.pdf' } },
    ]);
    expect(saved.files).toEqual([join(stepDir, 'image-0.png'), join(stepDir, 'report.pdf')]);
    expect(readdirSync(dir)).toEqual([]);
  });
});
