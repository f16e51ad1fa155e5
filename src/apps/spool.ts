import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { formatBytes } from '../config/sizes.js';
import { RunnerError } from '../errors.js';
import { isProcessAlive } from '../process-info.js';
import { Base64File } from './base64-file.js';
import type { JsonPath, StringSink } from './json-stream.js';

// Large base64 payloads of a result (an image's `data`, a resource's `blob`)
// go to a file in `<artifacts>/.runner/spool/` while the message streams in,
// instead of into memory: decoded, 45 MB of image is 45 MB of disk, where in
// memory it was 60 MB of base64 string, and again a 45 MB Buffer to save it.
// In the parsed message the value becomes a token; saveResult claims the
// token and moves the file into the step folder.

/** A base64 value longer than this many characters is spooled. */
export const SPOOL_AFTER_CHARS = 64 * 1024;
/** Tokens of deleted payloads kept, so a late claim fails saying why instead of saving the token's bytes. */
const DISCARDED_KEPT = 1000;
const TOKEN_PREFIX = 'runner-spool:';
/** Put in place of a value that was not valid base64: not valid base64 either, so the SDK rejects the result as it would have. */
export const INVALID_BASE64_TOKEN = `${TOKEN_PREFIX}invalid-base64`;
/** Length of a token: base64 of the prefix and a uuid. */
const TOKEN_LENGTH = Buffer.from(`${TOKEN_PREFIX}${randomUUID()}`).toString('base64').length;

/** A spooled payload, claimed: its file (decoded bytes) is now the claimer's to move or delete. */
export interface SpooledFile {
  path: string;
  bytes: number;
}

interface Entry extends SpooledFile {
  owner: Spool;
}

// Process-wide, since saveResult knows results, not transports. A token is a random uuid: an app cannot forge one.
const claimable = new Map<string, Entry>();
const discarded = new Map<string, string>();
/** Every spool file this process has not handed over: deleted at exit, whatever else failed to. */
const liveFiles = new Set<string>();
let exitHookInstalled = false;

/** Whether a string at `path` of a message is a payload saveResult saves as a file. */
export function isSpoolPath(path: JsonPath): boolean {
  if (path[0] !== 'result' || typeof path[2] !== 'number') return false;
  if (path.length === 4) return (path[1] === 'content' && path[3] === 'data') || (path[1] === 'contents' && path[3] === 'blob');
  return path.length === 5 && path[1] === 'content' && path[3] === 'resource' && path[4] === 'blob';
}

/**
 * The file behind a token, handed over once: undefined for any other string.
 * Throws a `storage` RunnerError when the payload was spooled but is gone
 * (its app closed, too many were waiting, or the disk filled up).
 */
export function claimSpooled(value: unknown): SpooledFile | undefined {
  if (typeof value !== 'string' || value.length !== TOKEN_LENGTH) return undefined;
  const entry = claimable.get(value);
  if (entry) {
    claimable.delete(value);
    entry.owner.release(value, entry);
    liveFiles.delete(entry.path);
    return { path: entry.path, bytes: entry.bytes };
  }
  const reason = discarded.get(value);
  if (reason === undefined) return undefined;
  discarded.delete(value);
  throw new RunnerError('storage', `a large payload of the result was spooled to disk and is gone: ${reason}`);
}

function rememberDiscarded(token: string, reason: string): void {
  discarded.set(token, reason);
  if (discarded.size > DISCARDED_KEPT) discarded.delete(discarded.keys().next().value!);
}

function removeFile(path: string): void {
  liveFiles.delete(path);
  rmSync(path, { force: true });
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const path of liveFiles) rmSync(path, { force: true });
  });
}

/** Deletes `<pid>-*.part` files of processes that are gone (a runner killed with SIGKILL cleans nothing up). */
export function sweepStaleSpoolFiles(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^(\d+)-[^/]*\.part$/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || isProcessAlive(pid)) continue;
    rmSync(join(dir, name), { force: true });
  }
}

/**
 * One transport's spool: the files of its messages that wait to be claimed,
 * at most `capBytes` of them (the oldest are deleted first: an app sending
 * large unsolicited responses cannot fill the disk), all deleted on `close`.
 */
export class Spool {
  private readonly waiting = new Map<string, Entry>();
  private waitingBytes = 0;
  private readonly writing = new Set<SpoolWriter>();
  private folderReady = false;

  constructor(readonly dir: string, readonly capBytes: number) {}

  /** A sink for one base64 value; throws when its file cannot be created (the value then stays in memory). */
  open(): SpoolWriter {
    if (!this.folderReady) {
      mkdirSync(this.dir, { recursive: true });
      sweepStaleSpoolFiles(this.dir);
      installExitHook();
      this.folderReady = true;
    }
    const path = join(this.dir, `${process.pid}-${randomBytes(8).toString('hex')}.part`);
    const writer = new SpoolWriter(this, new Base64File(path));
    liveFiles.add(path);
    this.writing.add(writer);
    return writer;
  }

  /** Bytes of spooled files waiting to be claimed. */
  get unclaimedBytes(): number {
    return this.waitingBytes;
  }

  /** Deletes every file not claimed yet, and any being written: the transport is closing. */
  close(): void {
    const reason = 'the app closed before the result was saved';
    for (const writer of [...this.writing]) writer.discard(reason);
    for (const [token, entry] of [...this.waiting]) this.drop(token, entry, reason);
  }

  /** @internal A writer's file is complete and its message was delivered. */
  keep(writer: SpoolWriter, token: string, bytes: number): void {
    this.writing.delete(writer);
    const entry: Entry = { path: writer.path, bytes, owner: this };
    claimable.set(token, entry);
    this.waiting.set(token, entry);
    this.waitingBytes += bytes;
    for (const [oldest, old] of this.waiting) {
      if (this.waitingBytes <= this.capBytes || oldest === token) break;
      this.drop(oldest, old, `more than ${formatBytes(this.capBytes)} of this app's payloads were waiting to be saved`);
    }
  }

  /** @internal The writer's file is gone or handed over. */
  forget(writer: SpoolWriter): void {
    this.writing.delete(writer);
  }

  /** @internal A claimed entry leaves the spool. */
  release(token: string, entry: Entry): void {
    if (this.waiting.delete(token)) this.waitingBytes -= entry.bytes;
  }

  private drop(token: string, entry: Entry, reason: string): void {
    claimable.delete(token);
    this.release(token, entry);
    removeFile(entry.path);
    rememberDiscarded(token, reason);
  }
}

/** A StringSink writing one base64 value to a spool file; the parsed message gets its token. */
export class SpoolWriter implements StringSink {
  private readonly token = Buffer.from(`${TOKEN_PREFIX}${randomUUID()}`).toString('base64');
  private outcome: ReturnType<Base64File['end']> | undefined;
  private settled = false;

  constructor(private readonly spool: Spool, private readonly file: Base64File) {}

  get path(): string {
    return this.file.path;
  }

  write(piece: string): void {
    this.file.write(piece);
  }

  /** The value to put in the message: the token, or for invalid base64 a token atob rejects too. */
  end(): string {
    this.outcome = this.file.end();
    if (this.outcome.kind !== 'ok') liveFiles.delete(this.file.path);
    return this.outcome.kind === 'invalid' ? INVALID_BASE64_TOKEN : this.token;
  }

  /** The message was delivered: the file waits for its claim (a failed write waits as the reason its claim fails). */
  keep(): void {
    const outcome = this.outcome;
    if (this.settled) return;
    if (!outcome) return this.discard(); // never ended: nothing in a message refers to it
    this.settled = true;
    if (outcome.kind === 'ok') return this.spool.keep(this, this.token, outcome.bytes);
    this.spool.forget(this);
    if (outcome.kind === 'failed') rememberDiscarded(this.token, `cannot write ${this.file.path}: ${outcome.error.message}`);
  }

  /** The message was dropped (invalid, too large, or its transport closed): the file is deleted. */
  discard(reason = 'the message it came in was dropped'): void {
    if (this.settled) return;
    this.settled = true;
    this.spool.forget(this);
    this.file.remove();
    liveFiles.delete(this.file.path);
    // Should the token have reached a result after all, its claim fails instead of saving the token's own bytes.
    if (this.outcome) rememberDiscarded(this.token, reason);
  }
}
