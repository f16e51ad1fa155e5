import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeJsonAtomic } from '../../src/artifacts/json-file.js';
import { containsLargeString, LARGE_STRING_CHARS, sliceText } from '../../src/artifacts/large-strings.js';

const MiB = LARGE_STRING_CHARS;

/** `length` characters of `fill`, with `parts` written in at the given offsets. */
function textWith(length: number, parts: [number, string][], fill = 'x'): string {
  const chars = fill.repeat(length).split('');
  for (const [at, part] of parts) chars.splice(at, part.length, ...part.split(''));
  return chars.join('');
}

// A non-BMP character (a surrogate pair) across each slice boundary, the
// characters JSON escapes on both sides of it, and lone surrogates, which
// JSON.stringify writes as `\udxxx`: the hard cases for writing in slices.
const awkward = textWith(2 * MiB + 17, [
  [0, '"\\\u0000\n'],
  [MiB - 3, '\t"\u{1F600}\\\u001f'], // the pair sits at MiB-1 and MiB
  [2 * MiB - 2, '\u{1D11E}'], // and at the second (2MiB-2, 2MiB-1, once the first slice is one shorter)
  [2 * MiB + 5, '\ud800a\udc00\u2028"'],
  [MiB + 100_000, '\udc01'], // a lone surrogate in a slice with nothing else to escape
]);

function tempFile(name = 'out.json'): string {
  return join(mkdtempSync(join(tmpdir(), 'runner-json-')), name);
}

function expectSameBytes(data: unknown): void {
  const file = tempFile();
  writeJsonAtomic(file, data);
  expect(readFileSync(file).equals(Buffer.from(JSON.stringify(data, null, 2) + '\n', 'utf8'))).toBe(true);
  expect(readdirSync(join(file, '..'))).toEqual(['out.json']); // no temp file left
}

describe('writeJsonAtomic', () => {
  it('writes the bytes of JSON.stringify(data, null, 2) for values with strings of 1 MiB or more', () => {
    expect(awkward.charCodeAt(MiB - 1)).toBe(0xd83d); // the pair straddles the first boundary
    expectSameBytes(awkward);
    expectSameBytes({ text: awkward });
    expectSameBytes({
      id: 'a',
      outputs: { nested: [1, { deep: awkward, small: 'é"' }, 'x'.repeat(MiB)], after: null },
      text: [awkward, 'short', awkward],
      empty: {},
      list: [],
      skipped: undefined,
      when: new Date(0),
    });
    expectSameBytes([['y'.repeat(3 * MiB + 1)], 'x'.repeat(MiB - 1)]);
  });

  it('writes ordinary records as before', () => {
    expectSameBytes({ id: 'a', text: 'small "quoted" \u{1F600}', n: [1, 2, null] });
    expectSameBytes(null);
  });

  it('leaves no temp file and raises a storage error when the file cannot be put in place', () => {
    const file = tempFile('target');
    mkdirSync(file); // a folder where the file should go: the rename fails after the temp file is written
    expect(() => writeJsonAtomic(file, { text: awkward })).toThrow(expect.objectContaining({ code: 'storage', message: expect.stringContaining(file) }));
    expect(readdirSync(join(file, '..'))).toEqual(['target']);
    expect(existsSync(`${file}.${process.pid}.tmp`)).toBe(false);
  });
});

describe('large strings', () => {
  it('are found anywhere in a value, and cut into slices that never split a surrogate pair', () => {
    expect(containsLargeString({ a: [{ b: 'x'.repeat(MiB) }] })).toBe(true);
    expect(containsLargeString({ a: [{ b: 'x'.repeat(MiB - 1) }], c: 1, d: null })).toBe(false);
    const slices = [...sliceText(awkward)];
    expect(slices.join('')).toBe(awkward);
    expect(slices.map((slice) => slice.length)).toEqual([MiB - 1, MiB - 1, 19]);
    expect(slices.every((slice) => slice.length <= MiB)).toBe(true);
  });
});
