import { spawn, type ChildProcess } from 'node:child_process';
import type { RunnerConfig, StdioAppConfig } from '../config/types.js';
import { trackChild, untrackChild } from './child-reaper.js';

// Starting an app's process, apart from talking to it: this module loads no
// MCP SDK, so a run can start its apps before it loads the SDK and the engine,
// and the app boots on the other core meanwhile (a one-step run otherwise
// waits for both, one after the other).

/**
 * The environment variables an app inherits from the runner, as the SDK's
 * `getDefaultEnvironment()` chooses them (test/unit/app-process.test.ts
 * holds the two equal): importing the SDK's stdio module here would load the
 * SDK before the app starts.
 */
const INHERITED_ENV_VARS =
  process.platform === 'win32'
    ? ['APPDATA', 'COMSPEC', 'HOMEDRIVE', 'HOMEPATH', 'LOCALAPPDATA', 'PATH', 'PATHEXT', 'PROCESSOR_ARCHITECTURE', 'PROGRAMDATA', 'PROGRAMFILES', 'PROGRAMFILES(X86)', 'PROGRAMW6432', 'SYSTEMDRIVE', 'SYSTEMROOT', 'TEMP', 'USERNAME', 'USERPROFILE', 'WINDIR']
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/** The runner's environment variables an app inherits: the SDK's safe list, without exported shell functions. */
export function defaultAppEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV_VARS) {
    const value = process.env[key];
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  return env;
}

export interface AppProcessSpec {
  command: string;
  args?: string[];
  /** Added to defaultAppEnvironment(). */
  env?: Record<string, string>;
  cwd?: string;
}

/** Spawns an app: piped stdio, no shell, in a process group of its own (so closing it can signal its whole tree). */
export function spawnApp(spec: AppProcessSpec): ChildProcess {
  return spawn(spec.command, spec.args ?? [], {
    env: { ...defaultAppEnvironment(), ...spec.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    shell: false,
    detached: true,
    cwd: spec.cwd,
  });
}

/** The spec an app entry of the config is spawned with (what AppConnection gives its transport). */
export function appProcessSpec(app: StdioAppConfig, artifacts: string): AppProcessSpec {
  return { command: app.command, args: app.args, cwd: app.cwd, env: { RUNNER_ARTIFACTS: artifacts, ...app.env } };
}

/** How much an early process may write before it is adopted; past it, its pipes are left to fill (it waits). */
const HOLD_BYTES = 1024 * 1024;

/** What an early process wrote before it was adopted. */
export interface HeldOutput {
  stdout: Buffer[];
  stderr: Buffer[];
}

/**
 * An app process spawned before anyone talks to it, with what happened to it
 * meanwhile: what it writes is held (up to 1 MiB, then it waits on its full
 * pipes): a process that exits unread would otherwise have its output
 * discarded, and with it the stderr that says why it failed. Its `spawn`,
 * `error` and `close` events are remembered for the transport that adopts it,
 * which may come after they fired.
 */
export class EarlyAppProcess {
  spawned = false;
  error: Error | undefined;
  closed = false;
  private held: HeldOutput = { stdout: [], stderr: [] };
  private heldBytes = 0;
  private readonly holders: Array<[NodeJS.ReadableStream, (chunk: Buffer) => void]> = [];

  constructor(readonly child: ChildProcess) {
    child.once('spawn', () => (this.spawned = true));
    child.once('error', (error) => (this.error ??= error));
    child.once('close', () => (this.closed = true));
    for (const name of ['stdout', 'stderr'] as const) {
      const stream = child[name];
      if (!stream) continue;
      const hold = (chunk: Buffer) => {
        this.held[name].push(chunk);
        this.heldBytes += chunk.length;
        if (this.heldBytes >= HOLD_BYTES) for (const [held] of this.holders) held.pause();
      };
      stream.on('data', hold);
      this.holders.push([stream, hold]);
    }
  }

  /** Stops holding: returns what the process wrote so far. Its streams are left paused, for the adopter to resume. */
  adopt(): HeldOutput {
    for (const [stream, hold] of this.holders.splice(0)) {
      stream.off('data', hold);
      stream.pause();
    }
    const held = this.held;
    this.held = { stdout: [], stderr: [] };
    return held;
  }
}

/**
 * The stdio apps a run started early, by name, each taken at most once by the
 * app's first connection; what nobody took is ended by `discard()`.
 */
export class EarlyApps {
  private readonly waiting = new Map<string, EarlyAppProcess>();

  /** Spawns each named stdio app of `config` (unknown names, HTTP apps and the built-in app are skipped). */
  static start(config: RunnerConfig, names: Iterable<string>): EarlyApps {
    const early = new EarlyApps();
    for (const name of new Set(names)) {
      const app = config.apps[name];
      if (app?.transport !== 'stdio') continue;
      const child = spawnApp(appProcessSpec(app, config.artifacts));
      // Tracked from the start: a runner killed before it adopts the process leaves no orphan behind.
      if (child.pid) trackChild(child.pid);
      early.waiting.set(name, new EarlyAppProcess(child));
    }
    return early;
  }

  /** The early process of app `name`, once: its first connection adopts it, any later one spawns its own. */
  take(name: string): EarlyAppProcess | undefined {
    const early = this.waiting.get(name);
    this.waiting.delete(name);
    return early;
  }

  /** Ends the processes nobody took: stdin closed and SIGTERM to the group (they never got a message); SIGKILL with the runner if that is not enough. */
  discard(): void {
    for (const { child } of this.waiting.values()) {
      child.stdin?.destroy();
      const pid = child.pid;
      if (!pid) continue;
      // Tracked until it exits: one that ignores SIGTERM is killed with the runner.
      if (child.exitCode !== null || child.signalCode !== null) untrackChild(pid);
      else child.once('exit', () => untrackChild(pid));
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        // gone already
      }
    }
    this.waiting.clear();
  }
}
