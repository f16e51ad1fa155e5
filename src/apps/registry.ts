import { join } from 'node:path';
import type { RunnerConfig } from '../config/types.js';
import { CallError } from './call-error.js';
import { AppConnection, type AppInfo } from './connection.js';
import { VerdictStore } from './verdicts.js';

export interface AppRegistryOptions {
  config: RunnerConfig;
  /** Folder for per-app stderr logs (`<dir>/<app>.log`); none: stderr is only kept in memory. */
  logDir?: string;
  /** Where era verdicts persist. @default `<artifacts>/.runner/verdicts.json` */
  verdictFile?: string | null;
}

/**
 * Opens apps lazily, once each, and shares the connection with every caller.
 * An app whose connection died is opened again by the next caller that needs it.
 */
export class AppRegistry {
  private readonly connections = new Map<string, Promise<AppConnection>>();
  private readonly verdicts: VerdictStore;
  /** Info of every app that connected at least once, for the run record. */
  readonly infos = new Map<string, AppInfo>();
  private closed = false;
  private readonly closing = new AbortController();

  constructor(private readonly options: AppRegistryOptions) {
    const verdictFile =
      options.verdictFile === undefined ? join(options.config.artifacts, '.runner', 'verdicts.json') : options.verdictFile;
    this.verdicts = new VerdictStore(verdictFile);
  }

  has(name: string): boolean {
    return name in this.options.config.apps;
  }

  /** The live connection to `name`, opening (or re-opening) it if needed. Throws CallError. */
  async get(name: string, signal?: AbortSignal): Promise<AppConnection> {
    if (this.closed) throw new CallError('cancelled', `the runner is shutting down; ${name} was not started`);
    const app = this.options.config.apps[name];
    if (!app) {
      const known = Object.keys(this.options.config.apps).join(', ') || 'none';
      throw new CallError('unavailable', `no app named \`${name}\` in the config (apps: ${known})`);
    }
    const existing = this.connections.get(name);
    if (existing) {
      const connection = await abortable(existing.catch(() => undefined), signal);
      if (connection?.alive) return connection;
      if (!connection) return abortable(existing, signal); // a failed open stays failed for this registry's callers
    }
    // The open is shared by every caller, so no one caller's signal may abort it; each caller only stops waiting.
    const opening = AppConnection.open({
      app,
      artifacts: this.options.config.artifacts,
      verdicts: this.verdicts,
      logFile: this.options.logDir ? join(this.options.logDir, `${name}.log`) : undefined,
      secretValues: this.options.config.secretValues,
      signal: this.closing.signal,
    }).then((connection) => {
      this.infos.set(name, connection.info);
      return connection;
    });
    this.connections.set(name, opening);
    return abortable(opening, signal);
  }

  /** Opens several apps in parallel; failures are left for the steps that need them. */
  async warm(names: Iterable<string>, signal?: AbortSignal): Promise<void> {
    await Promise.all([...new Set(names)].map((name) => this.get(name, signal).catch(() => undefined)));
  }

  /** Closes every connection, in parallel. */
  async closeAll(): Promise<void> {
    this.closed = true;
    this.closing.abort(new CallError('cancelled', 'the runner is shutting down'));
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map((opening) => opening.then((connection) => connection.close()).catch(() => undefined)));
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
