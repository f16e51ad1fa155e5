import type { Clock } from '../../src/clock.js';

interface Timer {
  atMs: number;
  seq: number;
  fire: () => void;
}

/**
 * A Clock on fake time, pinned to a fixed date. Timers fire only when the
 * test moves time with `advance` (timers fire in order, each at its own
 * time) or `jump` (the machine slept: time leaps, overdue timers fire late).
 * Promise chains settle between timers, so code that sleeps in a loop works.
 */
export class FakeClock implements Clock {
  private nowMs: number;
  private timers: Timer[] = [];
  private seq = 0;

  constructor(start: Date | string | number) {
    this.nowMs = new Date(start).getTime();
  }

  now(): number {
    return this.nowMs;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer: Timer = {
        atMs: this.nowMs + Math.max(0, ms),
        seq: this.seq++,
        fire: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.timers = this.timers.filter((candidate) => candidate !== timer);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.timers.push(timer);
    });
  }

  timeout(ms: number): { signal: AbortSignal; clear(): void } {
    const controller = new AbortController();
    const clear = this.after(ms, () => controller.abort(new DOMException(`Timed out after ${ms}ms`, 'TimeoutError')));
    return { signal: controller.signal, clear };
  }

  after(ms: number, fire: () => void): () => void {
    const timer: Timer = { atMs: this.nowMs + Math.max(0, ms), seq: this.seq++, fire };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((candidate) => candidate !== timer);
    };
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer due on the way at its own time. */
  async advance(ms: number): Promise<void> {
    const target = this.nowMs + ms;
    await settle();
    for (let next = this.nextDue(target); next; next = this.nextDue(target)) {
      this.nowMs = Math.max(this.nowMs, next.atMs);
      this.timers = this.timers.filter((timer) => timer !== next);
      next.fire();
      await settle();
    }
    this.nowMs = target;
    await settle();
  }

  /** Moves time forward by `ms` at once, as after a suspended machine wakes: overdue timers fire late, at the new time. */
  async jump(ms: number): Promise<void> {
    this.nowMs += ms;
    await this.advance(0);
  }

  private nextDue(targetMs: number): Timer | undefined {
    let best: Timer | undefined;
    for (const timer of this.timers) {
      if (timer.atMs > targetMs) continue;
      if (!best || timer.atMs < best.atMs || (timer.atMs === best.atMs && timer.seq < best.seq)) best = timer;
    }
    return best;
  }
}

/** Lets every promise callback that is ready run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
