import type { InProcessApps } from '../apps/in-process-apps.js';
import { Console } from 'node:console';
import type { Readable, Writable } from 'node:stream';

/** What a command may touch of the process: injectable for tests. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdin: Readable & { isTTY?: boolean };
  /** Whether stderr is a terminal (live progress view, prompts). */
  stderrIsTTY: boolean;
  /** Whether stdout is a terminal (`runner logs` then escapes what would steer it). */
  stdoutIsTTY?: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Apps served in this process instead of started or dialed (tests, programs that embed the CLI); the others start as configured. */
  inProcessApps?: InProcessApps;
}

/** The real process's IO; a stream whose reader has gone away turns its writes into no-ops. */
export function processIO(): CliIO {
  const stdout = writeUntilClosed(process.stdout);
  const stderr = writeUntilClosed(process.stderr);
  return {
    stdout,
    stderr,
    stdin: process.stdin,
    stderrIsTTY: Boolean(process.stderr.isTTY),
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    cwd: process.cwd(),
    env: process.env,
  };
}

// `runner runs | head -2` used to die with an EPIPE stack trace: an unhandled 'error' on process.stdout.
// A one-shot command now finishes normally (closing its apps); a long-running one (serve, watch, cron)
// keeps running and only stops writing, as its runs are the point, not their log.
function writeUntilClosed(stream: Writable): (text: string) => void {
  let closed = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    closed = true;
  });
  return (text) => {
    if (!closed && !stream.destroyed) stream.write(text);
  };
}

// Every console method that prints, including those that print on stdout (log, info, debug, dir, table, ...).
const CONSOLE_METHODS = ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir', 'dirxml', 'table', 'group', 'groupCollapsed', 'groupEnd', 'count', 'countReset', 'time', 'timeLog', 'timeEnd', 'assert'] as const;

/**
 * Sends everything the global console prints to stderr. Stdout carries only what commands write through
 * `io.stdout`, so `--json` stays one JSON document even when a library (the MCP SDK among them) logs.
 */
export function routeConsoleToStderr(): void {
  const toStderr = new Console({ stdout: process.stderr, stderr: process.stderr });
  // eslint-disable-next-line @typescript-eslint/unbound-method -- Node binds a Console's methods to it
  Object.assign(console, Object.fromEntries(CONSOLE_METHODS.map((method) => [method, toStderr[method]])));
}

/** Global options every command shares. */
export interface GlobalOptions {
  config?: string;
  debug?: boolean;
}
