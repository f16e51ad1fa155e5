import { closeSync, openSync, rmSync, writeSync } from 'node:fs';

// A base64 string decoded into a file as it streams, four characters at a
// time, and checked the way `atob` checks it (the SDK validates image `data`
// and resource `blob` with atob): ASCII whitespace is ignored, only
// A-Z a-z 0-9 + / are allowed, up to two `=` at the very end, and a length
// that leaves one character over is invalid.

const WHITESPACE = /[\t\n\f\r ]/;
const WHITESPACE_ALL = /[\t\n\f\r ]+/g;
const NOT_BASE64 = /[^A-Za-z0-9+/]/;
const ONLY_PADDING = /^=*$/;

/** What the decoded file holds once the string has ended. */
export type Base64FileOutcome =
  | { kind: 'ok'; bytes: number }
  | { kind: 'invalid' }
  | { kind: 'failed'; error: Error };

/** Decodes base64 pieces into `path` (created at once); `end` says whether the whole was valid. */
export class Base64File {
  private fd: number | null;
  private carry = ''; // base64 characters not yet decoded (fewer than four after each write)
  private chars = 0; // alphabet characters seen
  private padding = 0; // `=` seen at the end
  private invalid = false;
  private error: Error | undefined;
  private bytes = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'wx', 0o600);
  }

  write(piece: string): void {
    if (this.invalid || this.error) return;
    // The common case, plain base64 before any padding, is checked in one pass.
    if (this.padding === 0 && !NOT_BASE64.test(piece)) return this.decode(piece);
    let text = WHITESPACE.test(piece) ? piece.replace(WHITESPACE_ALL, '') : piece;
    if (this.padding > 0) {
      // Only more `=` may follow the first one.
      this.padding += text.length;
      if (!ONLY_PADDING.test(text) || this.padding > 2) this.invalid = true;
      return;
    }
    const equals = text.indexOf('=');
    if (equals !== -1) {
      const tail = text.slice(equals);
      this.padding = tail.length;
      if (!ONLY_PADDING.test(tail) || this.padding > 2) {
        this.invalid = true;
        return;
      }
      text = text.slice(0, equals);
    }
    if (NOT_BASE64.test(text)) {
      this.invalid = true;
      return;
    }
    this.decode(text);
  }

  /** Decodes whole groups of four characters; the rest waits for the next piece. */
  private decode(text: string): void {
    this.chars += text.length;
    const pending = this.carry + text;
    const whole = pending.length - (pending.length % 4);
    if (whole > 0) this.writeBytes(Buffer.from(pending.slice(0, whole), 'base64'));
    this.carry = pending.slice(whole);
  }

  /** Closes the file; an invalid or failed one is deleted. */
  end(): Base64FileOutcome {
    if (!this.invalid && !this.error) {
      // With padding, the padded length must be a multiple of four; without, one character over is not a byte.
      if (this.padding > 0 ? (this.chars + this.padding) % 4 !== 0 : this.chars % 4 === 1) this.invalid = true;
      else if (this.carry.length > 0) this.writeBytes(Buffer.from(this.carry, 'base64'));
    }
    this.closeFile();
    if (this.invalid || this.error) this.remove();
    if (this.error) return { kind: 'failed', error: this.error };
    return this.invalid ? { kind: 'invalid' } : { kind: 'ok', bytes: this.bytes };
  }

  /** Closes (if open) and deletes the file. */
  remove(): void {
    this.closeFile();
    rmSync(this.path, { force: true });
  }

  private writeBytes(data: Buffer): void {
    try {
      for (let written = 0; written < data.length; ) written += writeSync(this.fd!, data, written);
      this.bytes += data.length;
    } catch (error) {
      // Disk full: the rest is dropped; the claim of this value will say why.
      this.error = error as Error;
      this.remove();
    }
  }

  private closeFile(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      closeSync(fd);
    } catch {
      // Nothing was left to flush that matters: a failed close leaves the outcome as it was.
    }
  }
}
