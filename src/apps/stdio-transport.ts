import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { LineBuffer } from './line-buffer.js';

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
 *   (64 MiB by default) in linear time, instead of the SDK's 10 MB cap.
 * - Being a subclass, the SDK probes the protocol era in place instead of on a
 *   disposable sibling process: one spawn per connection even before a
 *   verdict is remembered, and no probe sibling whose grandchildren escape.
 */
export class AppStdioTransport extends StdioClientTransport {
  /** `maxMessageBytes`: the largest message the app may send (its `max-result`). */
  constructor(params: ConstructorParameters<typeof StdioClientTransport>[0], maxMessageBytes: number) {
    super(params);
    (this as unknown as { _readBuffer: LineBuffer })._readBuffer = new LineBuffer(maxMessageBytes);
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
