import { join } from 'node:path';
import { systemClock, type Clock } from '../clock.js';
import type { RunnerConfig } from '../config/types.js';
import { writeWarning } from '../errors.js';
import { CallError } from './call-failure.js';
import type { EarlyApps } from './app-process.js';
import type { AppConnection, AppConnectionOptions, AppInfo } from './connection.js';
import { VerdictStore } from './verdicts.js';

export interface AppRegistryOptions {
  config: RunnerConfig;
  /** Folder for per-app stderr logs (`<dir>/<app>.log`); none: stderr is only kept in memory. */
  logDir?: string;
  /** Where era verdicts persist. @default `<artifacts>/.runner/verdicts.json` */
  verdictFile?: string | null;
  clock?: Clock;
  /** See AppConnectionOptions.connectTransport: in-process servers instead of spawned ones. */
  connectTransport?: AppConnectionOptions['connectTransport'];
  /** App processes the caller spawned already: each app's first connection adopts its own. Those never adopted end with closeAll. */
  early?: EarlyApps;
  /** Told about what fails nothing but the user should know (an app that had to be signalled to stop). Default: a `warning:` line on stderr. */
  onWarning?: (message: string) => void;
}

/** One app's connection attempt, with what the restart backoff needs to know. */
interface Slot {
  opening: Promise<AppConnection>;
  /** Set once `opening` resolved: the fast path for every call after the first. */
  connection?: AppConnection;
  /** When the attempt started, and when it failed (0 while it has not). */
  startedAt: number;
  failedAt: number;
  /** Consecutive short-lived or failed attempts before this one. */
  failures: number;
}

/** A connection that lived this long counts as healthy: its death restarts the backoff from zero. */
const HEALTHY_AFTER_MS = 30_000;

/** Delay before the (failures+1)th consecutive attempt: 0, then 250 ms doubling to 10 s. */
export function restartDelayMs(failures: number): number {
  return failures === 0 ? 0 : Math.min(250 * 2 ** (failures - 1), 10_000);
}

/**
 * Opens apps lazily, once each, and shares the connection with every caller.
 * An app whose connection died is opened again by the next caller that needs
 * it, after a backoff that grows while it keeps dying young; an app that
 * failed to start fails its callers at once until its backoff has passed.
 */
export class AppRegistry {
  private readonly slots = new Map<string, Slot>();
  private readonly clock: Clock;
  private readonly verdicts: VerdictStore;
  /** Info of every app that connected at least once, for the run record. */
  readonly infos = new Map<string, AppInfo>();
  private closed = false;
  private readonly closing = new AbortController();

  constructor(private readonly options: AppRegistryOptions) {
    const verdictFile =
      options.verdictFile === undefined ? join(options.config.artifacts, '.runner', 'verdicts.json') : options.verdictFile;
    this.verdicts = new VerdictStore(verdictFile);
    this.clock = options.clock ?? systemClock;
  }

  has(name: string): boolean {
    return name in this.options.config.apps;
  }

  /** The connection to `name` if it is open and alive right now, without waiting (the per-call fast path); else undefined. */
  live(name: string): AppConnection | undefined {
    if (this.closed) return undefined;
    const connection = this.slots.get(name)?.connection;
    return connection?.alive ? connection : undefined;
  }

  /** The live connection to `name`, opening (or re-opening) it if needed. Throws CallError. */
  async get(name: string, signal?: AbortSignal): Promise<AppConnection> {
    if (this.closed) throw new CallError('cancelled', `the runner is shutting down; ${name} was not started`);
    const app = this.options.config.apps[name];
    const unusable = this.options.config.unusableApps?.[name];
    if (!app && unusable) {
      const { file, line, col } = unusable.location;
      throw new CallError('unavailable', `app \`${name}\` (imported from ${file}:${line}:${col}) cannot be used: ${unusable.reasons.join('; ')}`);
    }
    if (!app) {
      const known = Object.keys(this.options.config.apps).join(', ') || 'none';
      throw new CallError('unavailable', `no app named \`${name}\` in the config (apps: ${known})`);
    }
    const slot = this.slots.get(name);
    if (slot?.connection?.alive) return slot.connection;
    let failures = 0;
    if (slot) {
      const connection = await abortable(slot.opening.catch(() => undefined), signal);
      if (connection?.alive) return connection;
      if (this.slots.get(name) !== slot) return this.get(name, signal); // another caller already reopened it
      const now = this.clock.now();
      if (!connection) {
        // Do not hammer an app that cannot start: its callers get the same failure until the backoff has passed.
        if (now - slot.failedAt < restartDelayMs(slot.failures + 1)) return abortable(slot.opening, signal);
        failures = slot.failures + 1;
      } else {
        failures = now - slot.startedAt < HEALTHY_AFTER_MS ? slot.failures + 1 : 1;
      }
    }
    const delayMs = slot ? restartDelayMs(failures) : 0;
    const next: Slot = { opening: undefined as unknown as Promise<AppConnection>, startedAt: this.clock.now() + delayMs, failedAt: 0, failures };
    // The open is shared by every caller, so no one caller's signal may abort it; each caller only stops waiting.
    next.opening = (delayMs > 0 ? this.clock.sleep(delayMs, this.closing.signal) : Promise.resolve())
      // The connection's module (and the MCP SDK with it) loads with the first app opened: a command that opens none does without.
      .then(() => import('./connection.js'))
      .then(({ AppConnection }) =>
        AppConnection.open({
          app,
          artifacts: this.options.config.artifacts,
          verdicts: this.verdicts,
          logFile: this.options.logDir ? join(this.options.logDir, `${name}.log`) : undefined,
          secretValues: this.options.config.secretValues,
          secretEntries: this.options.config.secretEntries,
          signal: this.closing.signal,
          connectTransport: this.options.connectTransport,
          early: this.options.early?.take(name),
          onWarning: this.options.onWarning ?? writeWarning,
        }),
      )
      .then(
        (connection) => {
          this.infos.set(name, connection.info);
          next.connection = connection;
          return connection;
        },
        (error: unknown) => {
          next.failedAt = this.clock.now();
          throw error;
        },
      );
    next.opening.catch(() => undefined); // failures are read by callers; never unhandled
    this.slots.set(name, next);
    return abortable(next.opening, signal);
  }

  /** Opens several apps in parallel; failures are left for the steps that need them. */
  async warm(names: Iterable<string>, signal?: AbortSignal): Promise<void> {
    await Promise.all([...new Set(names)].map((name) => this.get(name, signal).catch(() => undefined)));
  }

  /** Closes every connection, in parallel. */
  async closeAll(): Promise<void> {
    this.closed = true;
    this.options.early?.discard();
    this.closing.abort(new CallError('cancelled', 'the runner is shutting down'));
    const all = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(all.map((slot) => slot.opening.then((connection) => connection.close()).catch(() => undefined)));
  }
}

/** Waits for `promise` unless `signal` aborts first; then rejects with the signal's reason. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
