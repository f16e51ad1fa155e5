import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { formatBytes } from '../config/sizes.js';

/** An app's log per run when its `max-log` says nothing. */
export const DEFAULT_MAX_LOG_BYTES = 10 * 1024 * 1024;

/**
 * An append-only log with a size limit, for what an app writes to stderr: the
 * first part goes to the file as it comes; past the limit, only the last part
 * is kept (in memory, at most a tenth of the limit), and `end` writes a marker
 * saying how much was left out, then that last part. A 1 GB stderr flood thus
 * costs at most `maxBytes` of disk and a tenth of it of memory, and the log
 * still shows how the app began and how it ended.
 */
export class CappedLog {
  private readonly stream: WriteStream;
  private readonly headBytes: number;
  private readonly tailBytes: number;
  private written = 0;
  private tail: string[] = [];
  private tailLength = 0;
  private dropped = 0;
  private failed = false;

  constructor(
    readonly file: string,
    maxBytes: number,
    onError: (error: NodeJS.ErrnoException) => void,
  ) {
    mkdirSync(dirname(file), { recursive: true });
    this.tailBytes = Math.floor(maxBytes / 10);
    this.headBytes = maxBytes - this.tailBytes;
    this.stream = createWriteStream(file, { flags: 'a' });
    // A full disk must not crash the runner through an unhandled stream error: the log stops, the app goes on.
    this.stream.on('error', (error) => {
      this.failed = true;
      onError(error);
    });
  }

  write(text: string): void {
    if (this.failed || text.length === 0) return;
    const room = this.headBytes - this.written;
    if (room > 0) {
      const head = Buffer.byteLength(text) <= room ? text : sliceBytes(text, room);
      this.stream.write(head);
      this.written += Buffer.byteLength(head);
      text = text.slice(head.length);
      if (text.length === 0) return;
    }
    this.tail.push(text);
    this.tailLength += text.length;
    // Characters approximate bytes here; the tail is a view of the end, not an exact count.
    while (this.tailLength - this.tail[0].length >= this.tailBytes) {
      const first = this.tail.shift()!;
      this.tailLength -= first.length;
      this.dropped += Buffer.byteLength(first);
    }
    if (this.tailLength > this.tailBytes * 2) {
      const joined = this.tail.join('');
      const keep = joined.slice(joined.length - this.tailBytes);
      this.dropped += Buffer.byteLength(joined.slice(0, joined.length - this.tailBytes));
      this.tail = [keep];
      this.tailLength = keep.length;
    }
  }

  /** Writes the marker and the kept last part (when anything was left out), then closes the file. */
  end(): Promise<void> {
    if (!this.failed && this.tail.length > 0) {
      const joined = this.tail.join('');
      const kept = joined.length > this.tailBytes ? joined.slice(joined.length - this.tailBytes) : joined;
      this.dropped += Buffer.byteLength(joined) - Buffer.byteLength(kept);
      if (this.dropped > 0) this.stream.write(`\n[runner: ${formatBytes(this.dropped)} of this app's stderr left out here (max-log); the last part follows]\n`);
      this.stream.write(kept);
    }
    this.tail = [];
    return new Promise((resolve) => this.stream.end(() => resolve()));
  }
}

/** The longest prefix of `text` that fits in `bytes` bytes of UTF-8. */
function sliceBytes(text: string, bytes: number): string {
  let end = Math.min(text.length, bytes);
  while (end > 0 && Buffer.byteLength(text.slice(0, end)) > bytes) end = Math.floor(end * 0.9);
  return text.slice(0, end);
}
