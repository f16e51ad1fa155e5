import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeTextChunks } from '../../src/artifacts/text-chunks.js';

/** The bytes writeTextChunks puts in a new file for `chunks`. */
function written(chunks: Iterable<string>): Buffer {
  const file = join(mkdtempSync(join(tmpdir(), 'runner-chunks-')), 'out.html');
  const fd = openSync(file, 'wx');
  try {
    writeTextChunks(fd, chunks);
  } finally {
    closeSync(fd);
  }
  return readFileSync(file);
}

describe('writeTextChunks', () => {
  it('writes the UTF-8 of the joined text, whatever falls on the 64 KiB boundaries of its buffer', () => {
    // Chunks of 1 to 3,000 characters of 1 to 4 bytes each (a lone surrogate becomes U+FFFD, 3 bytes),
    // their lengths spread by a stride, so that chunks of every kind end near each boundary.
    const pieces = ['<li>ascii</li>', 'é', '✓', '\u{1F600}', 'a\ud800', '\udc00b', '… · —'];
    const chunks = Array.from({ length: 3_000 }, (_, i) => pieces[i % pieces.length]!.repeat(1 + ((i * 7_919) % 600)));
    const bytes = written(chunks);
    expect(bytes.length).toBeGreaterThan(20 * 64 * 1024);
    // Each chunk on its own: a pair split between two chunks is two U+FFFD, not one character.
    expect(bytes.equals(Buffer.concat(chunks.map((chunk) => Buffer.from(chunk, 'utf8'))))).toBe(true);
  });

  it('writes a chunk larger than its buffer as it is, between the others', () => {
    const large = `${'x'.repeat(100_000)}\u{1F600}${'é'.repeat(30_000)}`;
    const chunks = ['head ', large, ' middle ', large.slice(0, 21_846), ' tail'];
    expect(written(chunks).equals(Buffer.from(chunks.join(''), 'utf8'))).toBe(true);
  });

  it('takes chunks from a generator as they are made, and writes nothing for none', () => {
    function* rows() {
      for (let i = 0; i < 5_000; i++) yield `<tr><td>${i}</td></tr>`;
    }
    expect(written(rows()).toString('utf8')).toBe([...rows()].join(''));
    expect(written([]).length).toBe(0);
  });
});
