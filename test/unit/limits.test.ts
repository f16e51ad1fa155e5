import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunnerConfig } from '../../src/config/types.js';
import { Limits } from '../../src/scheduler/limits.js';

// An app's `rate:` on fake time (p-queue's interval runs on setTimeout and Date.now, which vitest's
// fake timers control): what a test through a real app can only see with transport jitter in it.

afterEach(() => {
  vi.useRealTimers();
});

/** Limits for one app `api` with `rate` (and no concurrency limit). */
function limitsWithRate(count: number, intervalMs: number): Limits {
  return new Limits({ concurrency: 10, apps: { api: { name: 'api', rate: { count, intervalMs } } } } as unknown as RunnerConfig);
}

describe('an app rate', () => {
  it('delays calls instead of dropping them: at 3/s the 4th starts a second after the 1st, the 7th two', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
    const limits = limitsWithRate(3, 1000);
    const started: number[] = [];
    const t0 = Date.now();
    const calls = Array.from({ length: 7 }, (_, i) => limits.run(null, 'api', async () => (started.push(Date.now() - t0), i)));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(started).toEqual([0, 0, 0, 1000, 1000, 1000, 2000]);
  });

  it('holds no call back while the interval has room', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
    const limits = limitsWithRate(5, 60_000);
    const started: number[] = [];
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 5 }, () => limits.run(null, 'api', async () => started.push(Date.now() - t0))));
    expect(started).toEqual([0, 0, 0, 0, 0]);
  });
});
