import { describe, expect, it } from 'vitest';
import type { RetryPolicy } from '../../src/config/types.js';
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
