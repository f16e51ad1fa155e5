import type { Transport } from '@modelcontextprotocol/client';
import type { AppConfig } from '../config/types.js';

// Apps served in the runner's own process: what the CLI takes as CliIO.inProcessApps. A module of
// its own, with types only besides connectInProcess: the composition root and `runner run` load it
// at start, before (and without) the MCP SDK.

/** Where a served app works: what a started one learns from RUNNER_ARTIFACTS. */
export interface InProcessContext {
  /** The absolute artifacts folder. */
  artifacts: string;
}

/** Serves an app in this process: its client-side transport, or undefined to start or dial the app as configured. */
export type ConnectTransport = (app: AppConfig, context: InProcessContext) => Transport | undefined;

/** Apps served in the runner's own process instead of started or dialed (tests, programs that embed the CLI). */
export interface InProcessApps {
  /** Whether `app` is one of them: it is then never started ahead of its first connection. */
  serves(app: AppConfig): boolean;
  /** The client side of a new connection to `app` (one it serves). */
  connect(app: AppConfig, context: InProcessContext): Transport;
}

/** The ConnectTransport of `apps`: undefined for an app it does not serve. */
export function connectInProcess(apps: InProcessApps | undefined): ConnectTransport | undefined {
  return apps && ((app, context) => (apps.serves(app) ? apps.connect(app, context) : undefined));
}
