import { deserializeMessage } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { LineBuffer, MessageTooLargeError, STREAM_AFTER_BYTES } from '../../src/apps/line-buffer.js';

// The LineBuffer collects short lines and JSON.parses them; a line that passes
// `streamAfterBytes` is parsed as it arrives. Both must read the same messages,
// skip the same junk and enforce max-result the same way.

const response = (id: number, text: string) => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });

/** Feeds `text` in chunks of `size` bytes and reads every message. */
function readAll(buffer: LineBuffer, text: string, size = 65_536) {
  const bytes = Buffer.from(text);
  const messages: unknown[] = [];
  for (let i = 0; i < bytes.length; i += size) {
    buffer.append(bytes.subarray(i, i + size));
    for (let message = buffer.readMessage(); message !== null; message = buffer.readMessage()) messages.push(message);
  }
  return messages;
}

describe('LineBuffer', () => {
  it('reads the same messages from short and long lines, whichever way they end, skipping junk', () => {
    const long = 'é'.repeat(1_500_000); // 3 MB of UTF-8: past the 1 MiB switch
    const lines = [
      response(1, 'short'),
      'faulty junk line {not json',
      response(2, long),
      `${response(3, 'crlf')}\r`,
      `${response(4, long)}\r`,
      `{"junk":${JSON.stringify(long)}`, // a long line that is not JSON: skipped like a short one
      response(5, 'after junk'),
    ];
    const text = `${lines.join('\n')}\n`;
    const expected = [1, 2, 3, 4, 5].map((id) => deserializeMessage(lines.find((line) => line.startsWith(`{"jsonrpc":"2.0","id":${id},`))!.replace(/\r$/, '')));
    for (const size of [65_536, 1_000_003]) {
      expect(readAll(new LineBuffer(64 * 1024 * 1024), text, size)).toEqual(expected);
    }
  });

  it('fails a line over the limit in either mode, counting its raw bytes, and reads on after it', () => {
    for (const streamAfterBytes of [STREAM_AFTER_BYTES, 1024]) {
      const buffer = new LineBuffer(100_000, { streamAfterBytes });
      const big = Buffer.from(response(1, 'x'.repeat(200_000)));
      expect(() => {
        for (let i = 0; i < big.length; i += 10_000) buffer.append(big.subarray(i, i + 10_000));
      }).toThrow(MessageTooLargeError);
      // What follows the oversize line's end is read as before: the rest of it is junk, the next line a message.
      buffer.append(Buffer.from(`"}]}}\n${response(2, 'next')}\n`));
      expect(buffer.readMessage()).toMatchObject({ id: 2 });
    }
  });

  it('takes a line of exactly the limit in incremental mode, and one byte more fails', () => {
    // As before the incremental mode: the bytes of a line still waiting for its newline are what count.
    const message = `${response(1, 'y'.repeat(5000))}\r`;
    const bytes = Buffer.byteLength(message);
    const exact = new LineBuffer(bytes, { streamAfterBytes: 1024 });
    expect(readAll(exact, message, 1000)).toEqual([]);
    expect(readAll(exact, '\n')).toHaveLength(1);
    const under = new LineBuffer(bytes - 1, { streamAfterBytes: 1024 });
    expect(() => readAll(under, message, 1000)).toThrow(MessageTooLargeError);
  });

  it('rejects valid JSON that is not JSON-RPC the way deserializeMessage does, in either mode', () => {
    const notRpc = JSON.stringify({ hello: 'x'.repeat(5000) });
    let expected: unknown;
    try {
      deserializeMessage(notRpc);
    } catch (error) {
      expected = (error as Error).constructor;
    }
    expect(expected).toBeDefined();
    expect(expected).not.toBe(SyntaxError);
    for (const streamAfterBytes of [STREAM_AFTER_BYTES, 1024]) {
      const buffer = new LineBuffer(1_000_000, { streamAfterBytes });
      buffer.append(Buffer.from(`${notRpc}\n${response(1, 'ok')}\n`));
      expect(() => buffer.readMessage()).toThrow(expected as new () => Error);
      expect(buffer.readMessage()).toMatchObject({ id: 1 });
    }
  });

  it('clear() drops a half-read large line', () => {
    const buffer = new LineBuffer(10_000_000, { streamAfterBytes: 1024 });
    const bytes = Buffer.from(response(1, 'z'.repeat(10_000)));
    buffer.append(bytes.subarray(0, 5000));
    buffer.clear();
    buffer.append(Buffer.from(`\n${response(2, 'fresh')}\n`));
    expect(buffer.readMessage()).toMatchObject({ id: 2 });
    expect(buffer.readMessage()).toBeNull();
  });
});
