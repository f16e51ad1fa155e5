import type { FailureKind, RetryOverrides, RetryPolicy } from '../config/types.js';
import type { CallOutcome } from '../apps/call-error.js';
import type { ToolHints } from './policy.js';

/** Layers retry overrides over a base policy (config ← workflow defaults ← step). */
export function mergeRetry(base: RetryPolicy, ...overrides: (RetryOverrides | undefined)[]): RetryPolicy {
  let merged = base;
  for (const override of overrides) {
    if (!override) continue;
    merged = { ...merged };
    for (const [key, value] of Object.entries(override)) {
      if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value;
    }
  }
  return merged;
}

/**
 * The delay before attempt `attempt + 1`, after `attempt` failed attempts:
 * `delay × backoff^(attempt-1)`, capped at `max-delay`, with "equal jitter"
 * (half fixed, half random) so that many failing calls do not retry in step.
 */
export function computeBackoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponential = policy.delayMs * Math.pow(policy.backoff, Math.max(0, attempt - 1));
  const capped = Math.min(exponential, policy.maxDelayMs);
  return Math.round(capped / 2 + random() * (capped / 2));
}

/**
 * Whether repeating a call is safe: it never reached the app, or the tool is
 * read-only or idempotent, or the step accepted the risk (`retry.unsafe`).
 */
export function isRetrySafe(hints: ToolHints, outcome: CallOutcome, unsafe: boolean): boolean {
  return outcome === 'not-sent' || hints.readOnly || hints.idempotent || unsafe;
}

/** Whether a failure of this kind may be retried at all under the policy. */
export function isRetryableKind(kind: FailureKind, policy: RetryPolicy): boolean {
  if (kind === 'policy' || kind === 'input' || kind === 'cancelled' || kind === 'unavailable' || kind === 'storage') return false;
  return policy.on.includes(kind);
}
