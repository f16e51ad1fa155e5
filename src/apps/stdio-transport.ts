import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { LineBuffer } from './line-buffer.js';
import { Spool } from './spool.js';

export interface AppStdioTransportOptions {
  /** The largest message the app may send (its `max-result`). */
  maxMessageBytes: number;
  /** Where large base64 payloads of its results are spooled (`<artifacts>/.runner/spool`); without it they stay in memory. */
  spoolDir?: string;
}

/** The SDK transport's internals this subclass drives (pinned SDK version: 2.4.0). */
interface TransportInternals {
  _process?: ChildProcess;
  _serverParams: { command: string; args?: string[]; env?: Record<string, string>; cwd?: string };
  _readBuffer: { append(chunk: Buffer): void };
  _stderrStream?: NodeJS.WritableStream & Readable;
  processReadBuffer(): void;
}

/**
 * The SDK's stdio transport, with two changes that matter to a runner:
 *
 * - The app runs in its own process group, so closing it can signal the whole
 *   tree: a server started through `npx` or a shell runs as a grandchild, and
 *   a server may spawn helpers of its own. It also means a terminal's Ctrl-C
 *   reaches the runner only, which then cancels calls and closes apps in order.
 * - Messages are read with a LineBuffer: results up to the app's `max-result`
 *   (64 MiB by default) in linear time, instead of the SDK's 10 MB cap; a
 *   large one is parsed as it arrives, its base64 payloads spooled to files.
 * - Being a subclass, the SDK probes the protocol era in place instead of on a
 *   disposable sibling process: one spawn per connection even before a
 *   verdict is remembered, and no probe sibling whose grandchildren escape.
 */
export class AppStdioTransport extends StdioClientTransport {
  private readonly spool: Spool | undefined;

  constructor(params: ConstructorParameters<typeof StdioClientTransport>[0], options: AppStdioTransportOptions) {
    super(params);
    const { maxMessageBytes, spoolDir } = options;
    // Unclaimed payloads may wait for at most 4 results at the limit: the disk stays bounded whatever the app sends.
    this.spool = spoolDir === undefined ? undefined : new Spool(spoolDir, 4 * maxMessageBytes);
    (this as unknown as { _readBuffer: LineBuffer })._readBuffer = new LineBuffer(maxMessageBytes, { spool: this.spool });
  }

  /** The app's pid from spawn on, kept after it exits (the SDK's `pid` is cleared on close). */
  spawnedPid: number | null = null;
  /** Called once the child exists, before the handshake: whoever owns it can reap it from then on. */
  onspawn?: (pid: number) => void;

  override async start(): Promise<void> {
    const self = this as unknown as TransportInternals;
    if (self._process) throw new Error('AppStdioTransport already started');
    const params = self._serverParams;
    await new Promise<void>((resolve, reject) => {
      const child = spawn(params.command, params.args ?? [], {
        env: { ...getDefaultEnvironment(), ...params.env },
        stdio: ['pipe', 'pipe', self._stderrStream ? 'pipe' : 'inherit'],
        shell: false,
        detached: true,
        cwd: params.cwd,
      });
      self._process = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => {
        this.spawnedPid = child.pid ?? null;
        if (child.pid) this.onspawn?.(child.pid);
        resolve();
      });
      child.on('close', () => {
        self._process = undefined;
        this.spool?.close();
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          self._readBuffer.append(chunk);
          self.processReadBuffer();
        } catch (error) {
          this.onerror?.(error as Error);
          this.close().catch(() => {});
        }
      });
      child.stdout?.on('error', (error) => this.onerror?.(error));
      if (self._stderrStream && child.stderr) child.stderr.pipe(self._stderrStream);
    });
  }

  /** Closes the app as the SDK does, then deletes the payloads of its results nobody claimed. */
  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.spool?.close();
    }
  }
}

/** Signals every process in the group led by `pid`; false when the group is gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}
