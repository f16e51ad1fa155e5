/** What `overlap` does with a due run while the schedule's previous run still runs. */
export type OverlapMode = 'skip' | 'queue' | 'allow';

/** Queued runs beyond this are skipped: a schedule that always outruns its runs must not grow memory for weeks. */
export const MAX_QUEUED_RUNS = 100;

/**
 * One schedule's overlap rule: `skip` drops a due run while one runs, `queue`
 * starts it after the running one (first in, first out), `allow` starts it at once.
 */
export class OverlapGate {
  private running = 0;
  private readonly queued: (() => Promise<unknown>)[] = [];

  constructor(
    readonly mode: OverlapMode,
    private readonly maxQueued = MAX_QUEUED_RUNS,
  ) {}

  /** Runs of this schedule in flight. */
  get active(): number {
    return this.running;
  }

  /** Offers a run; `start` is called now, later (queued), or never (skipped). */
  offer(start: () => Promise<unknown>): 'started' | 'queued' | 'skipped' {
    if (this.running === 0 || this.mode === 'allow') {
      this.begin(start);
      return 'started';
    }
    if (this.mode === 'skip' || this.queued.length >= this.maxQueued) return 'skipped';
    this.queued.push(start);
    return 'queued';
  }

  /** Forgets queued runs that have not started; returns how many. */
  drain(): number {
    return this.queued.splice(0).length;
  }

  private begin(start: () => Promise<unknown>): void {
    this.running++;
    void start()
      .catch(() => undefined)
      .finally(() => {
        this.running--;
        const next = this.queued.shift();
        if (next) this.begin(next);
      });
  }
}
