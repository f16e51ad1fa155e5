import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { formatBytes } from '../config/sizes.js';
import { JsonStreamParser } from './json-stream.js';
import { checkMessage } from './jsonrpc-message.js';
import { isSpoolPath, SPOOL_AFTER_CHARS, type Spool, type SpoolWriter } from './spool.js';

/** Thrown when one message from an app is larger than its `max-result`. */
export class MessageTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`a message from the app was larger than its max-result of ${formatBytes(limitBytes)}`);
    this.name = 'MessageTooLargeError';
  }
}

/** A line longer than this is parsed as it arrives instead of collected first. */
export const STREAM_AFTER_BYTES = 1024 * 1024;

export interface LineBufferOptions {
  /** Where large base64 payloads of results go instead of memory; without one they stay in the message. */
  spool?: Spool;
  /** @default STREAM_AFTER_BYTES */
  streamAfterBytes?: number;
}

/** A large line, parsed: its value and the spool files its payloads went to. */
interface ParsedLine {
  value: unknown;
  files: SpoolWriter[];
}

/**
 * Splits an app's stdout into JSON-RPC messages, one per line, like the SDK's
 * ReadBuffer, with differences that matter for large results: a line is
 * collected as a list of chunks and joined once (the SDK concatenates the
 * whole buffer on every chunk, quadratic in the message size); the limit is
 * the app's `max-result` instead of a fixed 10 MB; and a line that passes
 * `streamAfterBytes` is parsed incrementally, chunk by chunk, so a 60 MB
 * result is held once as a parsed value, not also as raw bytes, joined bytes
 * and a decoded string (and its base64 payloads go to the spool).
 */
export class LineBuffer {
  private chunks: Buffer[] = [];
  private pendingBytes = 0;
  private large: LargeLine | undefined;
  private readonly lines: (Buffer | ParsedLine)[] = [];
  private readonly streamAfterBytes: number;

  constructor(private readonly maxBytes: number, private readonly options: LineBufferOptions = {}) {
    this.streamAfterBytes = options.streamAfterBytes ?? STREAM_AFTER_BYTES;
  }

  append(chunk: Buffer): void {
    let rest = chunk;
    for (let newline = rest.indexOf(0x0a); newline !== -1; newline = rest.indexOf(0x0a)) {
      const head = rest.subarray(0, newline);
      if (this.large) {
        const parsed = this.large.finish(head);
        if (parsed) this.lines.push(parsed);
        this.large = undefined;
      } else {
        this.chunks.push(head);
        this.lines.push(this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks));
      }
      this.chunks = [];
      this.pendingBytes = 0;
      rest = rest.subarray(newline + 1);
    }
    if (rest.length === 0) return;
    this.pendingBytes += rest.length;
    if (this.pendingBytes > this.maxBytes) {
      this.clear();
      throw new MessageTooLargeError(this.maxBytes);
    }
    if (this.large) {
      this.large.write(rest);
      return;
    }
    this.chunks.push(rest);
    if (this.pendingBytes > this.streamAfterBytes) {
      // From here on this line is parsed as it comes: what was collected first, then every chunk.
      this.large = new LargeLine(this.options.spool);
      for (const collected of this.chunks) this.large.write(collected);
      this.chunks = [];
    }
  }

  /** The next complete message, or null; a line that is not JSON is skipped (apps print junk). */
  readMessage(): JSONRPCMessage | null {
    for (let line = this.lines.shift(); line !== undefined; line = this.lines.shift()) {
      if (!Buffer.isBuffer(line)) return readParsed(line);
      const text = line.toString('utf8').replace(/\r$/, '');
      try {
        return checkMessage(JSON.parse(text));
      } catch (error) {
        if (error instanceof SyntaxError) continue;
        throw error;
      }
    }
    return null;
  }

  clear(): void {
    this.chunks = [];
    this.pendingBytes = 0;
    this.large?.discard();
    this.large = undefined;
    for (const line of this.lines) if (!Buffer.isBuffer(line)) discardFiles(line.files);
    this.lines.length = 0;
  }
}

/** Validates a parsed line as JSON-RPC, as a line read whole is; its files are kept only if it is. */
function readParsed(line: ParsedLine): JSONRPCMessage {
  let message: JSONRPCMessage;
  try {
    message = checkMessage(line.value);
  } catch (error) {
    discardFiles(line.files);
    throw error;
  }
  for (const file of line.files) file.keep();
  return message;
}

function discardFiles(files: SpoolWriter[]): void {
  for (const file of files) file.discard();
}

/** One line past `streamAfterBytes`, fed to an incremental parser; invalid JSON makes it junk, skipped at its end. */
class LargeLine {
  private readonly parser: JsonStreamParser;
  private readonly files: SpoolWriter[] = [];
  private junk = false;

  constructor(spool: Spool | undefined) {
    this.parser = new JsonStreamParser({
      sinkAfterChars: SPOOL_AFTER_CHARS,
      openSink: spool && ((path) => (isSpoolPath(path) ? this.openFile(spool) : undefined)),
    });
  }

  write(bytes: Buffer): void {
    if (this.junk) return;
    try {
      this.parser.write(bytes);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      this.discard();
    }
  }

  /** The line's last bytes (before its newline): its value, or null when it was not JSON. A trailing `\r` is JSON whitespace. */
  finish(last: Buffer): ParsedLine | null {
    this.write(last);
    if (this.junk) return null;
    try {
      return { value: this.parser.end(), files: this.files };
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      this.discard();
      return null;
    }
  }

  discard(): void {
    this.junk = true;
    discardFiles(this.files);
  }

  private openFile(spool: Spool): SpoolWriter | undefined {
    try {
      const file = spool.open();
      this.files.push(file);
      return file;
    } catch {
      return undefined; // no spool folder (read-only artifacts): the value stays in memory, as before
    }
  }
}
