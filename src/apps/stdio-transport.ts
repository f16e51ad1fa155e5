import type { ChildProcess } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';
import { SdkError, SdkErrorCode, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { formatBytes } from '../config/sizes.js';
import { timerMs } from '../clock.js';
import { spawnApp, type AppProcessSpec, type EarlyAppProcess } from './app-process.js';
import { LineBuffer } from './line-buffer.js';
import { Spool } from './spool.js';

export interface AppStdioTransportOptions extends AppProcessSpec {
  /** The app's process, spawned already (EarlyApps): start adopts it instead of spawning one. */
  early?: EarlyAppProcess;
  /** The largest message the app may send (its `max-result`). */
  maxMessageBytes: number;
  /** Where large base64 payloads of its results are spooled (`<artifacts>/.runner/spool`); without it they stay in memory. */
  spoolDir?: string;
  /** How long close waits for the app to exit after ending its stdin, and again after SIGTERM. @default 2000 (as the SDK's transport) */
  closeStepMs?: number;
  /** Told when close has to signal the app: it had not exited `waitedMs` after its stdin ended (SIGTERM), or after SIGTERM (SIGKILL). */
  onStopSignal?: (signal: 'SIGTERM' | 'SIGKILL', waitedMs: number) => void;
  /** How much of messages (in UTF-16 units: bytes for ASCII JSON) may wait for an app that stopped reading its stdin. @default 4 × maxMessageBytes */
  maxQueuedBytes?: number;
}

/** Thrown by a send while the messages already waiting for the app to read its stdin reach maxQueuedBytes. */
export class SendQueueFullError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the app stopped reading its stdin: ${formatBytes(limitBytes)} of messages are waiting for it`);
    this.name = 'SendQueueFullError';
  }
}

/** A send waiting for the write that carries its line. */
interface PendingSend {
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * A stdio transport for apps, built on the SDK's public `Transport` interface,
 * with what matters to a runner beyond the SDK's own stdio transport:
 *
 * - The app runs in its own process group, so closing it can signal the whole
 *   tree: a server started through `npx` or a shell runs as a grandchild, and
 *   a server may spawn helpers of its own. It also means a terminal's Ctrl-C
 *   reaches the runner only, which then cancels calls and closes apps in order.
 * - Messages are read with a LineBuffer: results up to the app's `max-result`
 *   (64 MiB by default) in linear time, instead of the SDK's 10 MB cap; a
 *   large one is parsed as it arrives, its base64 payloads spooled to files.
 * - Not being the SDK's own class, the SDK probes the protocol era in place
 *   instead of on a disposable sibling process: one spawn per connection even
 *   before a verdict is remembered, and no probe sibling whose grandchildren
 *   escape. (The SDK tells a stdio transport by its `stderr` and `pid`.)
 * - The messages sent in one turn of the event loop go out in one write (one
 *   syscall instead of one per message); while the app's stdin is full they
 *   wait, up to `maxQueuedBytes`, and go out together on 'drain'.
 *
 * Close is the SDK's: end stdin → SIGTERM → SIGKILL, 2 s apart; the rest of
 * the process group is the connection's to end.
 */
export class AppStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Called once the child exists, before the handshake: whoever owns it can reap it from then on. */
  onspawn?: (pid: number) => void;

  private child: ChildProcess | undefined;
  private started = false;
  private readonly readBuffer: LineBuffer;
  private readonly spool: Spool | undefined;
  /** The app's stderr, there before start so that no early line is missed. */
  private readonly stderrStream = new PassThrough();
  /** Lines sent but not yet written, and the sends waiting on them. */
  private queued: string[] = [];
  private queuedBytes = 0;
  private waiting: PendingSend[] = [];
  /** A flush is scheduled, or the stdin is full and 'drain' will flush. */
  private flushPending = false;
  private readonly maxQueuedBytes: number;

  constructor(private readonly options: AppStdioTransportOptions) {
    const { maxMessageBytes, spoolDir } = options;
    // Unclaimed payloads may wait for at most 4 results at the limit: the disk stays bounded whatever the app sends.
    this.spool = spoolDir === undefined ? undefined : new Spool(spoolDir, 4 * maxMessageBytes);
    this.readBuffer = new LineBuffer(maxMessageBytes, { spool: this.spool });
    this.maxQueuedBytes = options.maxQueuedBytes ?? 4 * maxMessageBytes;
  }

  /** The app's stderr, piped; readable before start. */
  get stderr(): Readable {
    return this.stderrStream;
  }

  /** The app's pid while it runs; null before start and once closed. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.started) return Promise.reject(new Error('AppStdioTransport already started'));
    this.started = true;
    const { early } = this.options;
    const child = early?.child ?? spawnApp(this.options);
    return new Promise((resolve, reject) => {
      this.child = child;
      const spawned = () => {
        if (child.pid) this.onspawn?.(child.pid);
        resolve();
      };
      const failed = (error: Error) => {
        reject(error);
        this.onerror?.(error);
      };
      const closed = () => {
        if (this.child === child) this.child = undefined;
        this.spool?.close();
        this.onclose?.();
      };
      // What an early process wrote before it was adopted comes first.
      const held = early?.adopt();
      for (const chunk of held?.stderr ?? []) this.stderrStream.write(chunk);
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stdout!.on('error', (error) => this.onerror?.(error));
      child.stderr!.pipe(this.stderrStream);
      child.stdout!.resume();
      if (held?.stdout.length) queueMicrotask(() => held.stdout.forEach((chunk) => this.receive(chunk)));
      // An early process may have spawned, failed or even exited before it was adopted: what it did is replayed.
      if (early?.error) failed(early.error);
      else child.on('error', failed);
      if (early?.spawned) spawned();
      else child.on('spawn', spawned);
      if (early?.closed) queueMicrotask(closed);
      else child.on('close', closed);
    });
  }

  /**
   * Queues the message's line; the lines queued in one turn go out in one
   * write, on a microtask. Resolves once that write is accepted (after
   * 'drain' when the stdin was full), as a single write would.
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (!this.child?.stdin) return Promise.reject(notConnected());
    const line = serializeMessage(message);
    if (this.queuedBytes > 0 && this.queuedBytes + line.length > this.maxQueuedBytes) {
      return Promise.reject(new SendQueueFullError(this.maxQueuedBytes));
    }
    this.queued.push(line);
    this.queuedBytes += line.length;
    const sent = new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
    if (!this.flushPending) {
      this.flushPending = true;
      queueMicrotask(() => this.flush());
    }
    return sent;
  }

  /** Writes every queued line at once; on a full stdin the next flush waits for 'drain'. */
  private flush(): void {
    this.flushPending = false;
    const stdin = this.child?.stdin;
    const waiting = this.takeQueue();
    if (waiting.sends.length === 0) return;
    if (!stdin || stdin.destroyed) {
      for (const send of waiting.sends) send.reject(notConnected());
      return;
    }
    if (stdin.write(waiting.text)) {
      for (const send of waiting.sends) send.resolve();
      return;
    }
    this.flushPending = true;
    const settle = (error?: Error) => {
      stdin.off('drain', onDrain).off('close', onClose);
      for (const send of waiting.sends) {
        if (error) send.reject(error);
        else send.resolve();
      }
      this.flushPending = false;
      if (this.queued.length > 0) this.flush();
    };
    const onDrain = () => settle();
    const onClose = () => settle(notConnected());
    stdin.on('drain', onDrain).on('close', onClose);
  }

  private takeQueue(): { text: string; sends: PendingSend[] } {
    const taken = { text: this.queued.length === 1 ? this.queued[0] : this.queued.join(''), sends: this.waiting };
    this.queued = [];
    this.queuedBytes = 0;
    this.waiting = [];
    return taken;
  }

  /** Stops the app (stopChild), then deletes the payloads of its results nobody claimed. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    // As the SDK's transport, whose writes are all in the stream by now: what was sent goes out before stdin ends.
    const { text, sends } = this.takeQueue();
    if (text && child?.stdin && !child.stdin.destroyed) child.stdin.write(text);
    for (const send of sends) send.resolve();
    try {
      if (child) await stopChild(child, this.options.closeStepMs ?? 2_000, this.options.onStopSignal);
    } finally {
      this.readBuffer.clear();
      this.spool?.close();
    }
  }

  /** A chunk of stdout: every complete message goes to onmessage; one over the limit closes the connection. */
  private receive(chunk: Buffer): void {
    try {
      this.readBuffer.append(chunk);
    } catch (error) {
      this.onerror?.(error as Error);
      this.close().catch(() => {});
      return;
    }
    for (;;) {
      try {
        const message = this.readBuffer.readMessage();
        if (message === null) return;
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error as Error);
      }
    }
  }
}

/**
 * End stdin → SIGTERM → SIGKILL, each step once the child had `stepMs` to
 * exit after the one before; resolves once it exited (or a last `stepMs` later). It waits for the child's exit, not for its pipes
 * to close: a grandchild holding them (a server under `npx`) must not hold it up.
 */
async function stopChild(child: ChildProcess, stepMs: number, onSignal?: AppStdioTransportOptions['onStopSignal']): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const onExit = () => wake?.();
  child.once('exit', onExit);
  const exitedWithin = async (): Promise<boolean> => {
    if (!hasExited(child)) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, timerMs(stepMs)).unref();
      });
      clearTimeout(timer);
    }
    return hasExited(child);
  };
  try {
    try {
      child.stdin?.end();
    } catch {
      // A broken pipe: the signals below still run.
    }
    if (await exitedWithin()) return;
    onSignal?.('SIGTERM', stepMs);
    child.kill('SIGTERM');
    if (await exitedWithin()) return;
    onSignal?.('SIGKILL', stepMs);
    child.kill('SIGKILL');
    await exitedWithin();
  } finally {
    child.off('exit', onExit);
  }
}

function notConnected(): SdkError {
  return new SdkError(SdkErrorCode.NotConnected, 'Not connected');
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}
