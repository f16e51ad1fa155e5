import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';
import { SdkError, SdkErrorCode, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { LineBuffer } from './line-buffer.js';
import { Spool } from './spool.js';

export interface AppStdioTransportOptions {
  command: string;
  args?: string[];
  /** Added to the SDK's default environment (PATH, HOME, ...). */
  env?: Record<string, string>;
  cwd?: string;
  /** The largest message the app may send (its `max-result`). */
  maxMessageBytes: number;
  /** Where large base64 payloads of its results are spooled (`<artifacts>/.runner/spool`); without it they stay in memory. */
  spoolDir?: string;
  /** How long close waits for the app to exit after ending its stdin, and again after SIGTERM. @default 2000 (as the SDK's transport) */
  closeStepMs?: number;
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

  constructor(private readonly options: AppStdioTransportOptions) {
    const { maxMessageBytes, spoolDir } = options;
    // Unclaimed payloads may wait for at most 4 results at the limit: the disk stays bounded whatever the app sends.
    this.spool = spoolDir === undefined ? undefined : new Spool(spoolDir, 4 * maxMessageBytes);
    this.readBuffer = new LineBuffer(maxMessageBytes, { spool: this.spool });
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
    const { command, args = [], env, cwd } = this.options;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env: { ...getDefaultEnvironment(), ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        detached: true,
        cwd,
      });
      this.child = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => {
        if (child.pid) this.onspawn?.(child.pid);
        resolve();
      });
      child.on('close', () => {
        if (this.child === child) this.child = undefined;
        this.spool?.close();
        this.onclose?.();
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stdout!.on('error', (error) => this.onerror?.(error));
      child.stderr!.pipe(this.stderrStream);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin) return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
    if (stdin.write(serializeMessage(message))) return Promise.resolve();
    return new Promise((resolve) => stdin.once('drain', resolve));
  }

  /** Stops the app (stopChild), then deletes the payloads of its results nobody claimed. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    try {
      if (child) await stopChild(child, this.options.closeStepMs ?? 2_000);
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
async function stopChild(child: ChildProcess, stepMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const onExit = () => wake?.();
  child.once('exit', onExit);
  const exitedWithin = async (): Promise<boolean> => {
    if (!hasExited(child)) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, stepMs).unref();
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
    child.kill('SIGTERM');
    if (await exitedWithin()) return;
    child.kill('SIGKILL');
    await exitedWithin();
  } finally {
    child.off('exit', onExit);
  }
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}
