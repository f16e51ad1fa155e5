import { describe, expect, it } from 'vitest';
import type { RetryPolicy } from '../../src/config/types.js';
import { addKeepingEnds, MAX_RECORDED_ENTRIES, type AttemptRecord } from '../../src/artifacts/run-record.js';
import { computeBackoffMs, isRetryableKind, isRetrySafe, mergeRetry } from '../../src/scheduler/retry.js';

const policy: RetryPolicy = { attempts: 5, delayMs: 1000, backoff: 2, maxDelayMs: 5000, on: ['transport', 'timeout', 'protocol'], unsafe: false };

describe('computeBackoffMs', () => {
  it('grows exponentially, caps at max-delay, and jitters within [half, full]', () => {
    expect([1, 2, 3, 4].map((attempt) => computeBackoffMs(attempt, policy, () => 1))).toEqual([1000, 2000, 4000, 5000]);
    expect([1, 2, 3, 4].map((attempt) => computeBackoffMs(attempt, policy, () => 0))).toEqual([500, 1000, 2000, 2500]);
  });
});

describe('retry safety', () => {
  const writer = { readOnly: false, destructive: false, idempotent: false, openWorld: false };
  it('repeats a non-idempotent call only when it never reached the app or the step accepts the risk', () => {
    expect(isRetrySafe(writer, 'unknown', false)).toBe(false);
    expect(isRetrySafe(writer, 'not-sent', false)).toBe(true);
    expect(isRetrySafe(writer, 'unknown', true)).toBe(true);
    expect(isRetrySafe({ ...writer, idempotent: true }, 'unknown', false)).toBe(true);
  });
  it('retries tool errors only when asked, and never policy or input errors', () => {
    expect(isRetryableKind('tool', policy)).toBe(false);
    expect(isRetryableKind('tool', { ...policy, on: ['tool'] })).toBe(true);
    expect(isRetryableKind('input', { ...policy, on: ['input' as never] })).toBe(false);
    expect(isRetryableKind('transport', policy)).toBe(true);
  });
  it('layers overrides, ignoring unset keys', () => {
    expect(mergeRetry(policy, { attempts: 2 }, undefined, { delayMs: 10, backoff: undefined })).toEqual({ ...policy, attempts: 2, delayMs: 10 });
  });
});

describe('app restart backoff', async () => {
  const { restartDelayMs } = await import('../../src/apps/registry.js');
  it('restarts at once the first time, then backs off doubling up to 10 s', () => {
    expect([0, 1, 2, 3, 6, 10].map(restartDelayMs)).toEqual([0, 250, 500, 1000, 8000, 10000]);
  });
});

describe('addKeepingEnds', () => {
  const entry = (attempt: number): AttemptRecord => ({ attempt, startedAt: '', endedAt: '', error: null });

  it('keeps every attempt up to MAX_RECORDED_ENTRIES, then the first half and the latest half', () => {
    const history: AttemptRecord[] = [];
    for (let attempt = 1; attempt <= MAX_RECORDED_ENTRIES; attempt++) addKeepingEnds(history, entry(attempt));
    expect(history.map((kept) => kept.attempt)).toEqual(Array.from({ length: MAX_RECORDED_ENTRIES }, (_, i) => i + 1));
    for (let attempt = MAX_RECORDED_ENTRIES + 1; attempt <= 250; attempt++) addKeepingEnds(history, entry(attempt));
    const half = MAX_RECORDED_ENTRIES / 2;
    expect(history.map((kept) => kept.attempt)).toEqual([...Array.from({ length: half }, (_, i) => i + 1), ...Array.from({ length: half }, (_, i) => 250 - half + 1 + i)]);
  });

  it('trims a history that came longer than the bound (a record written before it) on the next attempt', () => {
    const history = Array.from({ length: 130 }, (_, i) => entry(i + 1));
    addKeepingEnds(history, entry(131));
    expect(history).toHaveLength(MAX_RECORDED_ENTRIES);
    expect(history.slice(0, 50).map((kept) => kept.attempt)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(history.at(-1)!.attempt).toBe(131);
    expect(history[50]!.attempt).toBe(82);
  });
});
