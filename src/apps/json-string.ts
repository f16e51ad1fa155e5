import { StringDecoder } from 'node:string_decoder';
import type { StringSink } from './json-stream.js';

// Builds one JSON string value from what the parser reads: raw UTF-8 bytes
// and escapes. Both go into a scratch buffer as UTF-8 (an escape is encoded,
// a surrogate pair as one 4-byte character), decoded a scratch at a time into
// pieces joined once at the end: no per-character concatenation, and a text
// full of escapes costs no more pieces than one without. Only a lone
// surrogate escape, which UTF-8 cannot carry, becomes a piece of its own.

const SCRATCH_BYTES = 64 * 1024;
/** A raw segment at least this long is decoded straight from the chunk instead of copied. */
const DIRECT_BYTES = SCRATCH_BYTES / 2;
/** Pieces are joined into one group string every this many, so a string of many short pieces never holds more at once. */
const PIECES_PER_GROUP = 4096;

export class JsonStringBuilder {
  private readonly scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  private used = 0;
  private readonly decoder = new StringDecoder('utf8');
  private decoderHolds = false; // the decoder was written to since its last end(): it may hold part of a character
  private highSurrogate = -1; // a \uD800-\uDBFF escape waiting for its low half
  private pieces: string[] = [];
  private groups: string[] = [];
  private chars = 0;
  private sink: StringSink | undefined;
  private requestSink: (() => StringSink | undefined) | undefined;
  private sinkAfterChars = Infinity;

  /**
   * Starts a new string. `requestSink` is called once if the string grows
   * past `sinkAfterChars`; a sink it returns takes the string from there.
   */
  reset(sinkAfterChars = Infinity, requestSink?: () => StringSink | undefined): void {
    this.used = 0;
    this.highSurrogate = -1;
    this.pieces = [];
    this.groups = [];
    this.chars = 0;
    this.sink = undefined;
    this.sinkAfterChars = sinkAfterChars;
    this.requestSink = requestSink;
  }

  /** Raw bytes of the string (no quote, backslash or control character among them). */
  appendBytes(chunk: Buffer, start: number, end: number): void {
    const length = end - start;
    if (length === 0) return;
    if (this.highSurrogate >= 0) this.flushLoneSurrogate();
    if (length >= DIRECT_BYTES || length > SCRATCH_BYTES - this.used) this.flushScratch();
    if (length >= DIRECT_BYTES) {
      this.decoderHolds = true;
      this.pushPiece(this.decoder.write(chunk.subarray(start, end)));
      return;
    }
    chunk.copy(this.scratch, this.used, start, end);
    this.used += length;
  }

  /** One ASCII character of a simple escape (\n, \", ...). */
  appendAscii(code: number): void {
    if (this.highSurrogate >= 0) this.flushLoneSurrogate();
    if (this.used === SCRATCH_BYTES) this.flushScratch();
    this.scratch[this.used++] = code;
  }

  /** One \uXXXX escape: a UTF-16 code unit, paired with the next when it is a high surrogate. */
  appendCodeUnit(unit: number): void {
    if (this.highSurrogate >= 0) {
      if (unit >= 0xdc00 && unit <= 0xdfff) {
        const codePoint = 0x10000 + ((this.highSurrogate - 0xd800) << 10) + (unit - 0xdc00);
        this.highSurrogate = -1;
        this.appendUtf8(codePoint);
        return;
      }
      this.flushLoneSurrogate();
    }
    if (unit >= 0xd800 && unit <= 0xdbff) this.highSurrogate = unit;
    else if (unit >= 0xdc00 && unit <= 0xdfff) this.pushUtf16(unit);
    else this.appendUtf8(unit);
  }

  /** The whole string, or what the sink made of it. */
  finish(): string {
    if (this.highSurrogate >= 0) this.flushLoneSurrogate();
    this.flushScratch();
    this.endDecoder();
    let value: string;
    if (this.sink) value = this.sink.end();
    else if (this.groups.length > 0) value = [...this.groups, this.pieces.join('')].join('');
    else value = this.pieces.length === 1 ? this.pieces[0] : this.pieces.join('');
    this.reset();
    return value;
  }

  private appendUtf8(codePoint: number): void {
    if (this.used + 4 > SCRATCH_BYTES) this.flushScratch();
    const scratch = this.scratch;
    if (codePoint < 0x80) {
      scratch[this.used++] = codePoint;
    } else if (codePoint < 0x800) {
      scratch[this.used++] = 0xc0 | (codePoint >> 6);
      scratch[this.used++] = 0x80 | (codePoint & 0x3f);
    } else if (codePoint < 0x10000) {
      scratch[this.used++] = 0xe0 | (codePoint >> 12);
      scratch[this.used++] = 0x80 | ((codePoint >> 6) & 0x3f);
      scratch[this.used++] = 0x80 | (codePoint & 0x3f);
    } else {
      scratch[this.used++] = 0xf0 | (codePoint >> 18);
      scratch[this.used++] = 0x80 | ((codePoint >> 12) & 0x3f);
      scratch[this.used++] = 0x80 | ((codePoint >> 6) & 0x3f);
      scratch[this.used++] = 0x80 | (codePoint & 0x3f);
    }
  }

  private flushLoneSurrogate(): void {
    const unit = this.highSurrogate;
    this.highSurrogate = -1;
    this.pushUtf16(unit);
  }

  /** A code unit UTF-8 cannot carry: what came before is decoded first, then it becomes a piece. */
  private pushUtf16(unit: number): void {
    this.flushScratch();
    this.endDecoder();
    this.pushPiece(String.fromCharCode(unit));
  }

  private flushScratch(): void {
    if (this.used === 0) return;
    this.decoderHolds = true;
    const text = this.decoder.write(this.scratch.subarray(0, this.used));
    this.used = 0;
    this.pushPiece(text);
  }

  /** Bytes of a character cut short become U+FFFD, as Buffer#toString makes them. */
  private endDecoder(): void {
    if (!this.decoderHolds) return;
    this.decoderHolds = false;
    this.pushPiece(this.decoder.end());
  }

  private pushPiece(piece: string): void {
    if (piece.length === 0) return;
    if (this.sink) {
      this.sink.write(piece);
      return;
    }
    this.pieces.push(piece);
    this.chars += piece.length;
    if (this.pieces.length === PIECES_PER_GROUP) {
      this.groups.push(this.pieces.join(''));
      this.pieces = [];
    }
    if (this.chars > this.sinkAfterChars && this.requestSink) this.handToSink();
  }

  /** Asked once per string: a sink takes what was built so far and the rest. */
  private handToSink(): void {
    const request = this.requestSink!;
    this.requestSink = undefined;
    const sink = request();
    if (!sink) return;
    for (const group of this.groups) sink.write(group);
    for (const piece of this.pieces) sink.write(piece);
    this.groups = [];
    this.pieces = [];
    this.sink = sink;
  }
}
