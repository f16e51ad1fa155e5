import { deserializeMessage, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { formatBytes } from '../config/sizes.js';

/** Thrown when one message from an app is larger than its `max-result`. */
export class MessageTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`a message from the app was larger than its max-result of ${formatBytes(limitBytes)}`);
    this.name = 'MessageTooLargeError';
  }
}

/**
 * Splits an app's stdout into JSON-RPC messages, one per line, like the SDK's
 * ReadBuffer, with two differences that matter for large results: a line is
 * collected as a list of chunks and joined once (the SDK concatenates the
 * whole buffer on every chunk, quadratic in the message size), and the limit
 * is the app's `max-result` instead of a fixed 10 MB.
 */
export class LineBuffer {
  private chunks: Buffer[] = [];
  private pendingBytes = 0;
  private readonly lines: Buffer[] = [];

  constructor(private readonly maxBytes: number) {}

  append(chunk: Buffer): void {
    let rest = chunk;
    for (let newline = rest.indexOf(0x0a); newline !== -1; newline = rest.indexOf(0x0a)) {
      this.chunks.push(rest.subarray(0, newline));
      this.lines.push(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks));
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
    this.chunks.push(rest);
  }

  /** The next complete message, or null; a line that is not JSON is skipped (apps print junk). */
  readMessage(): JSONRPCMessage | null {
    for (let line = this.lines.shift(); line !== undefined; line = this.lines.shift()) {
      const text = line.toString('utf8').replace(/\r$/, '');
      try {
        return deserializeMessage(text);
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
    this.lines.length = 0;
  }
}
