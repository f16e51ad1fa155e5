import PQueue from 'p-queue';
import type { RunnerConfig } from '../config/types.js';
import { Slots } from './slots.js';

/**
 * The nested concurrency limits (docs/config.md, Limits): a run's workflow queue, then
 * the app's queue (with its rate), then the whole process's queue. Slots are
 * always taken in that order, so nesting cannot deadlock. One Limits object is
 * shared by every run in a process.
 */
export class Limits {
  private readonly process: Slots;
  /** Per app: its queue, or null when it has neither a concurrency nor a rate (nothing to wait for). */
  private readonly apps = new Map<string, PQueue | null>();

  constructor(private readonly config: RunnerConfig) {
    this.process = new Slots(config.concurrency);
  }

  /** The slots of one run's (or workflow's) `concurrency`; null when unset (unlimited: nothing to wait for). */
  static forWorkflow(concurrency: number | undefined): Slots | null {
    return concurrency === undefined ? null : new Slots(concurrency);
  }

  /**
   * Runs `task` holding a slot in each of the three limits. A task whose
   * signal aborted while it waited is dropped when its turn comes, without
   * running. (Handing the signal to p-queue would add one abort listener per
   * queued call to the run's signal: with thousands of foreach items queued,
   * every add and remove scans them all.)
   */
  run<T>(workflowQueue: Slots | null, app: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const appQueue = this.appQueue(app);
    const guarded = () => {
      if (signal?.aborted) return Promise.reject(signal.reason);
      return task();
    };
    // An unlimited layer is skipped rather than queued through: each layer costs every call a few promises.
    const inProcess = () => this.process.run(guarded);
    const inApp = appQueue ? () => appQueue.add<T>(inProcess) : inProcess;
    return workflowQueue ? workflowQueue.run(inApp) : inApp();
  }

  /**
   * How many calls can hold a slot in all three limits at once (of `app`; of
   * any app when none is named): more started together would only wait.
   */
  widthFor(workflowQueue: Slots | null, app?: string): number {
    const appLimit = (app === undefined ? undefined : this.config.apps[app]?.concurrency) ?? Number.POSITIVE_INFINITY;
    return Math.min(this.process.limit, workflowQueue?.limit ?? Number.POSITIVE_INFINITY, appLimit);
  }

  private appQueue(name: string): PQueue | null {
    let queue = this.apps.get(name);
    if (queue === undefined) {
      const app = this.config.apps[name];
      const rate = app?.rate;
      queue =
        app?.concurrency === undefined && !rate
          ? null
          : new PQueue({
              concurrency: app?.concurrency ?? Number.POSITIVE_INFINITY,
              ...(rate ? { intervalCap: rate.count, interval: rate.intervalMs, strict: true } : {}),
            });
      this.apps.set(name, queue);
    }
    return queue;
  }
}
