import { randomBytes } from 'node:crypto';
import { writeFileAtomic } from './atomic-file.js';
import { writeText } from './text-chunks.js';
import { containsLargeString, isWellFormed, LARGE_STRING_CHARS, sliceText } from './large-strings.js';

/**
 * Writes `data` as JSON atomically (writeFileAtomic: the old file or the new,
 * a `storage` RunnerError on failure). The bytes are always
 * `JSON.stringify(data, null, 2) + '\n'`.
 */
export function writeJsonAtomic(file: string, data: unknown): void {
  if (containsLargeString(data)) writeLargeJsonAtomic(file, data);
  else writeFileAtomic(file, JSON.stringify(data, null, 2) + '\n');
}

/**
 * writeJsonAtomic for a value holding strings of 1 MiB or more (a 60 MB tool
 * result): the rest is serialized with a placeholder for each such string,
 * and each string is written in slices, so no whole JSON copy of it is ever
 * made (stringify, `+ '\n'` and the Buffer of writeFileSync were three).
 */
function writeLargeJsonAtomic(file: string, data: unknown): void {
  const large: string[] = [];
  // Random, so no string in the data can pass for one; checked below all the same.
  const tag = `runner-large-${randomBytes(8).toString('hex')}-`;
  const skeleton = JSON.stringify(
    data,
    (_key, value: unknown) => (typeof value === 'string' && value.length >= LARGE_STRING_CHARS ? `${tag}${large.push(value) - 1}` : value),
    2,
  );
  if (countOccurrences(skeleton, tag) !== large.length) {
    writeFileAtomic(file, JSON.stringify(data, null, 2) + '\n');
    return;
  }
  writeFileAtomic(file, (fd) => {
    let pos = 0;
    large.forEach((text, index) => {
      const placeholder = `"${tag}${index}"`;
      const at = skeleton.indexOf(placeholder, pos);
      writeText(fd, skeleton.slice(pos, at + 1)); // up to and with the opening quote
      for (const slice of sliceText(text, FILE_SLICE_CHARS)) writeText(fd, jsonStringContent(slice));
      pos = at + placeholder.length - 1; // the closing quote goes out with what follows
    });
    writeText(fd, skeleton.slice(pos) + '\n');
  });
}

/**
 * Slices of 64 Ki characters: the escaped copy of one is small enough for
 * V8's young generation, so a 60 MB string of JSON text (quotes everywhere)
 * leaves no pile of large garbage behind until the next full GC.
 */
const FILE_SLICE_CHARS = 64 * 1024;

/** What JSON.stringify writes for these characters: `"`, `\`, control characters (lone surrogates are found apart). */
// eslint-disable-next-line no-control-regex -- control characters are among what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/**
 * A string as JSON.stringify writes it, without the quotes. It escapes code
 * unit by code unit (a pair kept whole), so the slices' escapes join into the
 * whole's. Most slices need none: they are written as they are, no copy.
 */
function jsonStringContent(slice: string): string {
  return NEEDS_ESCAPE.test(slice) || !isWellFormed(slice) ? JSON.stringify(slice).slice(1, -1) : slice;
}

function countOccurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count++;
  return count;
}
