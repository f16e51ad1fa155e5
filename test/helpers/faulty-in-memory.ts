import type { Transport, JSONRPCMessage } from '@modelcontextprotocol/client';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { InProcessApps } from '../../dist/apps/in-process-apps.js';
import type { AppConfig } from '../../dist/config/types.js';
// Plain JS modules, shared with the stdio fixture app.
import { parseFaultyFlags } from '../apps/faulty-flags.js';
import { createFaultyServer } from '../apps/faulty-tools.js';
import { faultyApp } from './workspace.js';

// The faulty app served in the test's own process, for tests of what the executor decides (retries,
// timeouts, policy, limits, the record): each connection costs no process start, and the app still
// speaks the protocol of both eras through the SDK's own stdio entry (serveStdio). Messages go as
// JSON text and arrive on a later turn of the event loop, as through a pipe. What only a process
// shows (its stderr and log, its exit, signals, process groups, orphans, max-result on the wire)
// needs the real app: one started with a flag that acts those out starts as configured, as does
// any app of runInProcess(..., { apps: 'process' }).

/** Flags the in-process app honours; any other flag (a process behaviour) makes the app start as configured. */
const IN_PROCESS_FLAGS = new Set(['--counter', '--state', '--name', '--legacy-only']);

/** Serves every faulty app in this process (runInProcess passes it as CliIO.inProcessApps). */
export function faultyInMemory(): InProcessApps {
  return {
    serves: (app) => faultyFlags(app) !== undefined,
    connect: (app) => {
      const [client, server] = linkedPair();
      const options: Record<string, unknown> = { ...parseFaultyFlags(faultyFlags(app)), exit: () => void server.close(), inFlight: { count: 0 } };
      if (options.legacyOnly) void createFaultyServer(options).connect(server);
      else serveStdio(() => createFaultyServer(options), { transport: server });
      return client;
    },
  };
}

/** The flags of a faulty app that can be served in this process, or undefined: another app, or a flag only a process acts out. */
function faultyFlags(app: AppConfig): string[] | undefined {
  if (app.transport !== 'stdio') return undefined;
  const script = app.args.indexOf(faultyApp);
  if (script === -1) return undefined;
  const flags = app.args.slice(script + 1);
  return flags.some((flag) => flag.startsWith('--') && !IN_PROCESS_FLAGS.has(flag.split('=')[0]!)) ? undefined : flags;
}

/** Two transports joined like the two ends of a pipe: each message copied as JSON and delivered on a later turn. */
function linkedPair(): [Transport, Transport] {
  const ends = [new PipeEnd(), new PipeEnd()] as const;
  ends[0].other = ends[1];
  ends[1].other = ends[0];
  return [ends[0], ends[1]];
}

class PipeEnd implements Transport {
  other: PipeEnd | undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private closed = false;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    const other = this.other;
    if (this.closed || !other) throw new Error('the connection is closed');
    const text = JSON.stringify(message);
    setImmediate(() => {
      if (!other.closed) other.onmessage?.(JSON.parse(text) as JSONRPCMessage);
    });
  }

  /**
   * Closes both ends, the other on a later turn, after what was sent to it: as an app reads what is
   * left in its stdin, then its end (aborting the calls it still holds). Like a process that exits
   * then, it has done so when this resolves.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const other = this.other;
    this.other = undefined;
    await new Promise((resolve) => setImmediate(resolve));
    await other?.close();
    this.onclose?.();
  }
}
