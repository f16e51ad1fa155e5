import { connectInProcess, type ConnectTransport, type InProcessApps } from './apps/in-process-apps.js';
import { AppRegistry } from './apps/registry.js';
import { systemClock, type Clock } from './clock.js';
import type { RunnerConfig } from './config/types.js';
import type { Limits } from './scheduler/limits.js';
import type { RunStore } from './store/run-store.js';

/**
 * The one place that wires a loaded config to the parts a command runs on:
 * the app registry, the limits, the run store and the clock. Each part is
 * made on first use, once, so a command that only reads the config opens
 * nothing (and loads neither SQLite nor Redis); `close()` closes what was
 * opened, apps first (their calls may still record into the store), then
 * the store. Closing twice is harmless.
 */
export class Composition implements AsyncDisposable {
  readonly clock: Clock;
  private readonly connectApp: ConnectTransport | undefined;
  private registry: { apps: AppRegistry; logDir: string | undefined } | undefined;
  private limitsPromise: Promise<Limits> | undefined;
  private storePromise: Promise<RunStore> | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    readonly config: RunnerConfig,
    options: { clock?: Clock; /** Apps served in this process (CliIO.inProcessApps). */ inProcessApps?: InProcessApps } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.connectApp = connectInProcess(options.inProcessApps);
  }

  /** The app registry; `logDir` (where each app's stderr goes) is fixed by the first call. */
  apps(logDir?: string): AppRegistry {
    this.assertOpen();
    if (!this.registry) this.registry = { apps: new AppRegistry({ config: this.config, logDir, clock: this.clock, connectTransport: this.connectApp }), logDir };
    else if (logDir !== undefined && logDir !== this.registry.logDir) {
      throw new Error(`the app registry was opened with log folder ${this.registry.logDir ?? '(none)'}, not ${logDir}`);
    }
    return this.registry.apps;
  }

  /** The config's concurrency limits, shared by everything that calls apps through this composition. */
  async limits(): Promise<Limits> {
    this.assertOpen();
    this.limitsPromise ??= import('./scheduler/limits.js').then(({ Limits }) => new Limits(this.config));
    return await this.limitsPromise;
  }

  /** The run store: SQLite under the artifacts folder, or Redis in queue mode. */
  async store(): Promise<RunStore> {
    this.assertOpen();
    this.storePromise ??= import('./store/run-history.js').then(({ openRunStore }) => openRunStore(this.config, this.clock.now()));
    return await this.storePromise;
  }

  /** Closes the apps, then the store; resolves once both are closed. */
  close(): Promise<void> {
    this.closing ??= this.closeOpened();
    return this.closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async closeOpened(): Promise<void> {
    try {
      await this.registry?.apps.closeAll();
    } finally {
      // A store that failed to open has nothing to close; its error went to whoever asked for it.
      const store = await this.storePromise?.catch(() => undefined);
      store?.close();
    }
  }

  private assertOpen(): void {
    if (this.closing) throw new Error('the composition is closed: its apps and store cannot be opened again');
  }
}
