import { describe, expect, it } from 'vitest';
import { firstStepStartMs, latencySummary, percentile } from '../../bench/lib/latency.mjs';

// The trigger latencies of bench/soak.mjs and the bench's watch case (j):
// nearest-rank percentiles, and when a run's first step started.

describe('percentile', () => {
  it('takes the nearest rank: the smallest value with at least p% of the list at or below it', () => {
    const values = [9, 1, 5, 3, 7, 2, 8, 4, 10, 6];
    expect(percentile(values, 50)).toBe(5);
    expect(percentile(values, 95)).toBe(10);
    expect(percentile(values, 90)).toBe(9);
    expect(percentile(values, 0)).toBe(1);
    expect(percentile(values, 100)).toBe(10);
    expect(percentile([4], 95)).toBe(4);
    expect(values).toEqual([9, 1, 5, 3, 7, 2, 8, 4, 10, 6]); // sorted on a copy
  });

  it('is null for no values', () => {
    expect(percentile([], 50)).toBeNull();
    expect(latencySummary([])).toEqual({ p50: null, p95: null, max: null, n: 0 });
  });
});

describe('latencySummary', () => {
  it('gives p50, p95, the largest and the count', () => {
    const values = Array.from({ length: 40 }, (_, index) => index + 1);
    expect(latencySummary(values)).toEqual({ p50: 20, p95: 38, max: 40, n: 40 });
  });
});

describe('firstStepStartMs', () => {
  it('is the earliest startedAt of the steps that started', () => {
    const record = {
      steps: [
        { id: 'late', startedAt: '2026-12-04T10:00:00.250Z' },
        { id: 'skipped', startedAt: null },
        { id: 'early', startedAt: '2026-12-04T10:00:00.007Z' },
      ],
    };
    expect(firstStepStartMs(record)).toBe(Date.parse('2026-12-04T10:00:00.007Z'));
    expect(firstStepStartMs({ steps: [{ id: 'pending' }] })).toBe(Number.POSITIVE_INFINITY);
  });
});
