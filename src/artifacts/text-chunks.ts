import { writeSync } from 'node:fs';

/** What writeTextChunks gathers before one write: a megabyte of HTML is some twenty writes. */
const GATHER_BYTES = 64 * 1024;

/** Reused by every call (they are synchronous): a new one each time would be fresh memory each time. */
let gather: Buffer | undefined;

/**
 * Writes `chunks` to `fd` as UTF-8, in order, through one reused 64 KiB
 * buffer: many small strings (a report's sections) become a few large
 * writes, and no copy of the whole text is ever made, as a `join` and then
 * the encoding of the joined string would make. Each chunk is encoded on
 * its own: a lone surrogate is written as U+FFFD (as `writeSync` and
 * `Buffer.from` write it), so is each half of a pair split between chunks.
 */
export function writeTextChunks(fd: number, chunks: Iterable<string>): void {
  const buffer = (gather ??= Buffer.allocUnsafe(GATHER_BYTES));
  let used = 0;
  for (const chunk of chunks) {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit, so a chunk under a third of the room left surely fits.
    if (chunk.length * 3 > GATHER_BYTES - used) {
      writeBytes(fd, buffer, used);
      used = 0;
      if (chunk.length * 3 > GATHER_BYTES) {
        writeText(fd, chunk);
        continue;
      }
    }
    used += buffer.write(chunk, used, 'utf8');
  }
  writeBytes(fd, buffer, used);
}

/**
 * Writes all of `text` as UTF-8. A string goes to writeSync as it is (Node
 * encodes it into memory it frees at once, where a Buffer would wait for the
 * GC); should the file take less than all of it, the rest goes as bytes.
 */
export function writeText(fd: number, text: string): void {
  const written = writeSync(fd, text);
  const size = Buffer.byteLength(text, 'utf8');
  if (written >= size) return;
  writeBytes(fd, Buffer.from(text, 'utf8'), size, written);
}

function writeBytes(fd: number, bytes: Buffer, length: number, from = 0): void {
  for (let offset = from; offset < length; ) offset += writeSync(fd, bytes, offset, length - offset);
}
