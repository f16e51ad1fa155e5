import type { Diagnostic, SourceLocation } from '../errors.js';
import type { Rate } from './types.js';

// Durations and rates are parsed once, during normalization; everything after
// that works with milliseconds. The patterns are shared with the JSON schemas,
// so the editor, the validator and the parser accept exactly the same text.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const RATE_INTERVAL_MS: Record<string, number> = { s: 1_000, min: 60_000, h: 3_600_000 };

/** One or more `<number><unit>` parts: `500ms`, `30s`, `1.5m`, `2h`, `1h30m`, `30d`. */
export const DURATION_PATTERN = '^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$';

/** `<count>/<unit>` with unit s, min or h: `15/min`, `2/s`, `100/h`. */
export const RATE_PATTERN = '^[1-9]\\d*/(s|min|h)$';

/** What a duration looks like, for messages and the editor schema. */
export const DURATION_EXPECTED = 'a duration like 500ms, 30s or 10m';

/** What a rate looks like, for messages and the editor schema. */
export const RATE_EXPECTED = 'a rate like 15/min, 2/s or 100/h';

const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const DURATION_WHOLE = new RegExp(DURATION_PATTERN);
const RATE_WHOLE = /^([1-9]\d*)\/(s|min|h)$/;

/**
 * Parses a duration into whole milliseconds; undefined when the text is not
 * one. A bare number is not a duration: `30` could mean 30 ms or 30 s, so a
 * unit is required.
 */
export function parseDuration(text: string): number | undefined {
  if (!DURATION_WHOLE.test(text)) return undefined;
  let totalMs = 0;
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) {
    totalMs += Number(amount) * UNIT_MS[unit];
  }
  return Number.isFinite(totalMs) ? Math.round(totalMs) : undefined;
}

/** Parses a rate limit (`15/min`) into a Rate; undefined when the text is not one. */
export function parseRate(text: string): Rate | undefined {
  const match = RATE_WHOLE.exec(text);
  if (!match) return undefined;
  const count = Number(match[1]);
  if (!Number.isSafeInteger(count)) return undefined;
  return { count, intervalMs: RATE_INTERVAL_MS[match[2]] };
}

/** `1500` → `1.5s`, `60000` → `1m`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)}s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)}m`;
  return `${+(ms / 3_600_000).toFixed(1)}h`;
}

/**
 * The warning for a timeout of zero, which is allowed but can only run out:
 * nothing finishes within it. `what` names the timeout (`` `timeout` of step `a` ``).
 */
export function zeroTimeoutWarning(what: string, text: string, location: SourceLocation): Diagnostic {
  return {
    location,
    message: `${what} is \`${text}\`: nothing can finish within it, so it runs out at once`,
    hint: 'give it a length, like 30s, or leave it out for the default',
    severity: 'warning',
  };
}
