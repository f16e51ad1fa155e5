import type { Transport, JSONRPCMessage } from '@modelcontextprotocol/client';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { InProcessApps } from '../../dist/apps/in-process-apps.js';
import type { AppConfig } from '../../dist/config/types.js';
// Plain JS modules, shared with the stdio fixture apps.
import { parseFaultyFlags } from '../apps/faulty-flags.js';
import { createFaultyServer } from '../apps/faulty-tools.js';
import { createShiftingServer } from '../apps/shifting-server.js';
import { faultyApp, shiftingApp } from './workspace.js';

// The fixture apps faulty and shifting served in the test's own process, for tests of what the
// executor decides (retries, timeouts, policy, limits, the record, a tool that changed under a
// workflow): each connection costs no process start, and the app still speaks the protocol of both
// eras through the SDK. Messages go as JSON text and arrive on a later turn of the event loop, as
// through a pipe. What only a process shows (its stderr and log, its exit, signals, process groups,
// orphans, max-result on the wire) needs the real app: a faulty app started with a flag that acts
// those out starts as configured, as does any app of runInProcess(..., { apps: 'process' }).

/** Flags the in-process faulty app honours; any other flag (a process behaviour) makes the app start as configured. */
const IN_PROCESS_FLAGS = new Set(['--counter', '--state', '--name', '--legacy-only']);

/** Serves every faulty and shifting app in this process (runInProcess passes it as CliIO.inProcessApps). */
export function fixturesInMemory(): InProcessApps {
  return {
    serves: (app) => faultyFlags(app) !== undefined || shiftingFiles(app) !== undefined,
    connect: (app) => {
      const [client, server] = linkedPair();
      const files = shiftingFiles(app);
      if (files) {
        // Like the process, the server reads its tools when it starts: at each connection.
        void createShiftingServer(files).connect(server);
        return client;
      }
      const options: Record<string, unknown> = { ...parseFaultyFlags(faultyFlags(app)), exit: () => void server.close(), inFlight: { count: 0 } };
      if (options.legacyOnly) void createFaultyServer(options).connect(server);
      else serveStdio(() => createFaultyServer(options), { transport: server });
      return client;
    },
  };
}

/** What follows `script` in a stdio app's arguments, or undefined when the app does not run it. */
function argsAfter(app: AppConfig, script: string): string[] | undefined {
  if (app.transport !== 'stdio') return undefined;
  const at = app.args.indexOf(script);
  return at === -1 ? undefined : app.args.slice(at + 1);
}

/** The flags of a faulty app that can be served in this process, or undefined: another app, or a flag only a process acts out. */
function faultyFlags(app: AppConfig): string[] | undefined {
  const flags = argsAfter(app, faultyApp);
  return flags?.some((flag) => flag.startsWith('--') && !IN_PROCESS_FLAGS.has(flag.split('=')[0]!)) ? undefined : flags;
}

/** The files of a shifting app (its tools, its call log and maybe its next tools), or undefined for another app. */
function shiftingFiles(app: AppConfig): string[] | undefined {
  return argsAfter(app, shiftingApp);
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
