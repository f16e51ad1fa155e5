import PQueue from 'p-queue';
import type { RunnerConfig } from '../config/types.js';

/**
 * The nested concurrency limits of DESIGN.md §8: a run's workflow queue, then
 * the app's queue (with its rate), then the whole process's queue. Slots are
 * always taken in that order, so nesting cannot deadlock. One Limits object is
 * shared by every run in a process.
 */
export class Limits {
  private readonly process: PQueue;
  private readonly apps = new Map<string, PQueue>();

  constructor(private readonly config: RunnerConfig) {
    this.process = new PQueue({ concurrency: config.concurrency });
  }

  /** A queue for one run's `concurrency` (unlimited when unset). */
  static forWorkflow(concurrency: number | undefined): PQueue {
    return new PQueue({ concurrency: concurrency ?? Number.POSITIVE_INFINITY });
  }

  /**
   * Runs `task` holding a slot in each of the three limits. A task whose
   * signal aborted while it waited is dropped when its turn comes, without
   * running. (Handing the signal to p-queue would add one abort listener per
   * queued call to the run's signal: with thousands of foreach items queued,
   * every add and remove scans them all.)
   */
  run<T>(workflowQueue: PQueue, app: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const appQueue = this.appQueue(app);
    const guarded = () => {
      if (signal?.aborted) return Promise.reject(signal.reason);
      return task();
    };
    return workflowQueue.add(() => appQueue.add(() => this.process.add(guarded))) as Promise<T>;
  }

  private appQueue(name: string): PQueue {
    let queue = this.apps.get(name);
    if (!queue) {
      const app = this.config.apps[name];
      const rate = app?.rate;
      queue = new PQueue({
        concurrency: app?.concurrency ?? Number.POSITIVE_INFINITY,
        ...(rate ? { intervalCap: rate.count, interval: rate.intervalMs, strict: true } : {}),
      });
      this.apps.set(name, queue);
    }
    return queue;
  }
}
