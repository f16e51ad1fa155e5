import { JsonStringBuilder } from './json-string.js';

// An incremental JSON parser for messages too large to hold twice. Fed the raw
// bytes of one line chunk by chunk, it builds exactly the value JSON.parse
// would build from the whole line, without ever holding the line itself: a
// 60 MB result used to cost its raw chunks, their concatenation, the decoded
// string and the parsed value at once. Iterative (an explicit stack), so deep
// nesting cannot overflow the call stack, and linear in the input.

/** Where a value sits in the message: object keys and array indexes from the root. */
export type JsonPath = readonly (string | number)[];

/** Takes over a long string value piece by piece; `end` gives the (short) string to put in its place. */
export interface StringSink {
  write(piece: string): void;
  end(): string;
}

export interface JsonStreamOptions {
  /**
   * Asked once for each string value (not key) that grows past
   * `sinkAfterChars`, with its path; a sink returned takes what was read of
   * it and the rest, and the value becomes what the sink's `end` returns.
   */
  openSink?: (path: JsonPath) => StringSink | undefined;
  /** @default 65536 */
  sinkAfterChars?: number;
}

// Parser states.
const VALUE = 0; // a value is expected
const VALUE_OR_CLOSE = 1; // right after `[`
const KEY_OR_CLOSE = 2; // right after `{`
const KEY = 3; // after `,` in an object
const COLON = 4;
const AFTER_VALUE = 5; // `,` or the container's close
const STRING = 6;
const ESCAPE = 7; // after a backslash
const UNICODE = 8; // inside \uXXXX
const NUMBER = 9;
const LITERAL = 10; // true, false, null
const DONE = 11; // the top-level value is complete: only whitespace may follow

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const SIMPLE_ESCAPES: Record<number, number> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 0x08, 0x66: 0x0c, 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09 };

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function isNumberByte(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x2b || byte === 0x2e || byte === 0x65 || byte === 0x45;
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  return -1;
}

/**
 * The value of a plain integer of at most 15 digits (exact in a double, so
 * the same as Number() of its text), or undefined for anything else.
 */
function readSmallInteger(chunk: Buffer, start: number, end: number): number | undefined {
  const negative = chunk[start] === 0x2d;
  const first = negative ? start + 1 : start;
  const digits = end - first;
  if (digits < 1 || digits > 15 || (chunk[first] === 0x30 && digits > 1)) return undefined;
  let value = 0;
  for (let i = first; i < end; i++) {
    const digit = chunk[i] - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}

/** Sets a property the way JSON.parse does: `__proto__` becomes an own data property, not the prototype. */
function setProperty(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** Parses one JSON text fed as Buffer chunks; throws SyntaxError where JSON.parse would. */
export class JsonStreamParser {
  private state = VALUE;
  private offset = 0; // bytes before the current chunk, for error positions
  private root: unknown;
  // The open containers, with (for objects) the key whose value is being read.
  private readonly containers: (unknown[] | Record<string, unknown>)[] = [];
  private readonly keys: (string | undefined)[] = [];
  // The string being read, when it spans chunks or has escapes.
  private readonly text = new JsonStringBuilder();
  private stringIsKey = false;
  private unicodeDigits = 0;
  private unicodeValue = 0;
  // The number or literal being read.
  private numberText = '';
  private literal = '';
  private literalIndex = 0;
  private readonly openSink: JsonStreamOptions['openSink'];
  private readonly sinkAfterChars: number;
  private readonly requestSink = () => this.openSink!(this.currentPath());

  constructor(options: JsonStreamOptions = {}) {
    this.openSink = options.openSink;
    this.sinkAfterChars = options.sinkAfterChars ?? 64 * 1024;
  }

  write(chunk: Buffer): void {
    const length = chunk.length;
    let i = 0;
    while (i < length) {
      switch (this.state) {
        case STRING:
          i = this.readString(chunk, i, i);
          break;
        case NUMBER:
          i = this.readNumber(chunk, i);
          break;
        case ESCAPE:
          this.readEscape(chunk[i], i);
          i++;
          break;
        case UNICODE:
          this.readUnicodeDigit(chunk[i], i);
          i++;
          break;
        case LITERAL:
          if (chunk[i] !== this.literal.charCodeAt(this.literalIndex)) this.fail(chunk[i], i);
          i++;
          if (++this.literalIndex === this.literal.length) this.finishValue(this.literal === 'true' ? true : this.literal === 'false' ? false : null);
          break;
        default: {
          const byte = chunk[i];
          if (isWhitespace(byte)) i++;
          else i = this.readStructural(chunk, byte, i);
        }
      }
    }
    this.offset += length;
  }

  /** The parsed value; throws SyntaxError when the text ended early. */
  end(): unknown {
    if (this.state === NUMBER) this.finishNumber(this.offset);
    if (this.state !== DONE) throw new SyntaxError('Unexpected end of JSON input');
    return this.root;
  }

  /** Handles a byte outside strings, numbers and literals; returns where to go on. */
  private readStructural(chunk: Buffer, byte: number, i: number): number {
    const state = this.state;
    if (state === VALUE || state === VALUE_OR_CLOSE) {
      if (byte === QUOTE) return this.startString(chunk, false, i + 1);
      if (byte === 0x7b) return this.open({}, KEY_OR_CLOSE, i);
      if (byte === 0x5b) return this.open([], VALUE_OR_CLOSE, i);
      if (byte === 0x2d || (byte >= 0x30 && byte <= 0x39)) {
        this.numberText = '';
        this.state = NUMBER;
        return i; // read by readNumber
      }
      if (byte === 0x74 || byte === 0x66 || byte === 0x6e) {
        this.literal = byte === 0x74 ? 'true' : byte === 0x66 ? 'false' : 'null';
        this.literalIndex = 1;
        this.state = LITERAL;
        return i + 1;
      }
      if (byte === 0x5d && state === VALUE_OR_CLOSE) return this.close(i);
    } else if (state === KEY_OR_CLOSE || state === KEY) {
      if (byte === QUOTE) return this.startString(chunk, true, i + 1);
      if (byte === 0x7d && state === KEY_OR_CLOSE) return this.close(i);
    } else if (state === COLON) {
      if (byte === 0x3a) {
        this.state = VALUE;
        return i + 1;
      }
    } else if (state === AFTER_VALUE) {
      const inArray = Array.isArray(this.containers[this.containers.length - 1]);
      if (byte === 0x2c) {
        this.state = inArray ? VALUE : KEY;
        return i + 1;
      }
      if (byte === (inArray ? 0x5d : 0x7d)) return this.close(i);
    }
    return this.fail(byte, i);
  }

  private open(container: unknown[] | Record<string, unknown>, state: number, i: number): number {
    this.containers.push(container);
    this.keys.push(undefined);
    this.state = state;
    return i + 1;
  }

  private close(i: number): number {
    this.keys.pop();
    this.finishValue(this.containers.pop());
    return i + 1;
  }

  /** A value is complete: it goes into its container (at the position its key was first seen, as JSON.parse does). */
  private finishValue(value: unknown): void {
    const depth = this.containers.length;
    if (depth === 0) {
      this.root = value;
      this.state = DONE;
      return;
    }
    const container = this.containers[depth - 1];
    if (Array.isArray(container)) container.push(value);
    else setProperty(container, this.keys[depth - 1]!, value);
    this.state = AFTER_VALUE;
  }

  /** After an opening quote: a short string within this chunk is sliced out at once, anything else built up. */
  private startString(chunk: Buffer, isKey: boolean, start: number): number {
    this.stringIsKey = isKey;
    const i = this.scanString(chunk, start);
    if (i < chunk.length && chunk[i] === QUOTE && i - start <= this.sinkAfterChars) {
      this.finishString(chunk.toString('utf8', start, i));
      return i + 1;
    }
    this.text.reset(this.sinkAfterChars, isKey || !this.openSink ? undefined : this.requestSink);
    this.state = STRING;
    return this.readString(chunk, start, i);
  }

  /** The position of the next quote or backslash (or the chunk's end); fails on a raw control character. */
  private scanString(chunk: Buffer, i: number): number {
    const length = chunk.length;
    for (; i < length; i++) {
      const byte = chunk[i];
      if (byte === QUOTE || byte === BACKSLASH) return i;
      if (byte < 0x20) this.fail(byte, i); // JSON forbids raw control characters in strings
    }
    return i;
  }

  /**
   * Reads string bytes from `start` (those before `scanned` are known to be
   * plain) through escapes, up to the closing quote or the chunk's end.
   */
  private readString(chunk: Buffer, start: number, scanned: number): number {
    const length = chunk.length;
    let i = scanned > start ? scanned : this.scanString(chunk, start);
    for (;;) {
      this.text.appendBytes(chunk, start, i);
      if (i === length) return i;
      if (chunk[i] === QUOTE) {
        this.finishString(this.text.finish());
        return i + 1;
      }
      // A backslash: an escape read here when the chunk holds all of it, else byte by byte in the next.
      const kind = chunk[i + 1];
      if (kind === undefined) {
        this.state = ESCAPE;
        return i + 1;
      }
      if (kind === 0x75) {
        if (i + 6 > length) {
          this.readEscape(kind, i + 1);
          return i + 2;
        }
        let unit = 0;
        for (let digit = 2; digit < 6; digit++) {
          const value = hexValue(chunk[i + digit]);
          if (value < 0) this.fail(chunk[i + digit], i + digit);
          unit = unit * 16 + value;
        }
        this.text.appendCodeUnit(unit);
        i += 6;
      } else {
        const code = SIMPLE_ESCAPES[kind];
        if (code === undefined) this.fail(kind, i + 1);
        this.text.appendAscii(code);
        i += 2;
      }
      start = i;
      i = this.scanString(chunk, start);
    }
  }

  private readEscape(byte: number, i: number): void {
    if (byte === 0x75) {
      this.unicodeDigits = 0;
      this.unicodeValue = 0;
      this.state = UNICODE;
      return;
    }
    const code = SIMPLE_ESCAPES[byte];
    if (code === undefined) this.fail(byte, i);
    this.text.appendAscii(code);
    this.state = STRING;
  }

  /** One hex digit of a \uXXXX split across chunks. */
  private readUnicodeDigit(byte: number, i: number): void {
    const digit = hexValue(byte);
    if (digit < 0) this.fail(byte, i);
    this.unicodeValue = this.unicodeValue * 16 + digit;
    if (++this.unicodeDigits === 4) {
      this.text.appendCodeUnit(this.unicodeValue);
      this.state = STRING;
    }
  }

  private finishString(value: string): void {
    if (this.stringIsKey) {
      this.keys[this.keys.length - 1] = value;
      this.state = COLON;
    } else {
      this.finishValue(value);
    }
  }

  private currentPath(): (string | number)[] {
    return this.containers.map((container, depth) => (Array.isArray(container) ? container.length : this.keys[depth]!));
  }

  private readNumber(chunk: Buffer, start: number): number {
    let i = start;
    while (i < chunk.length && isNumberByte(chunk[i])) i++;
    if (i === chunk.length) {
      this.numberText += chunk.toString('latin1', start, i); // it may go on in the next chunk
      return i;
    }
    // The byte after the number is read as structure.
    const integer = this.numberText === '' ? readSmallInteger(chunk, start, i) : undefined;
    if (integer !== undefined) this.finishValue(integer);
    else {
      this.numberText += chunk.toString('latin1', start, i);
      this.finishNumber(this.offset + i);
    }
    return i;
  }

  private finishNumber(position: number): void {
    // Number() of text that matches the JSON grammar gives the same double as JSON.parse.
    if (!NUMBER_TEXT.test(this.numberText)) throw new SyntaxError(`Invalid number in JSON before position ${position}`);
    const value = Number(this.numberText);
    this.numberText = '';
    this.finishValue(value);
  }

  private fail(byte: number, i: number): never {
    const shown = byte >= 0x20 && byte < 0x7f ? `token '${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16).padStart(2, '0')}`;
    throw new SyntaxError(`Unexpected ${shown} in JSON at position ${this.offset + i}`);
  }
}
