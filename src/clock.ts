/**
 * The only source of time. Scheduling, retries, debounce and timeouts read
 * time through a Clock so tests can run them on fake time with fixed dates.
 * (Fake timers do not control `AbortSignal.timeout()` or
 * `node:timers/promises`, so neither is used anywhere else.)
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A signal that aborts after `ms` with a TimeoutError; `clear()` stops the timer. */
  timeout(ms: number): { signal: AbortSignal; clear(): void };
  /** Calls `fire` after `ms`; the function returned stops the timer. (A timeout without a signal: one timer, nothing else.) */
  after(ms: number, fire: () => void): () => void;
}

/**
 * The longest delay one Node timer holds: 2^31 − 1 ms, about 24.8 days. A
 * longer one fires after 1 ms instead (with a TimeoutOverflowWarning), so a
 * `timeout: 30d` would time out at once; the system clock chains timers
 * instead, and a timeout handed to a library is capped with `timerMs`.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `ms` as a delay one Node timer can hold: at least 0, at most MAX_TIMER_MS.
 * For timeouts handed to a library that sets its own timer (the SDK's request
 * timeout): past that, the runner's own deadline still stands.
 */
export function timerMs(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_TIMER_MS);
}

/** The last minute `isoTime` formatted: `YYYY-MM-DDTHH:MM:` and its first millisecond. */
let minute = { startMs: NaN, prefix: '' };
/** 10000-01-01T00:00:00.000Z: from there on the year has more than four digits. */
const FOUR_DIGIT_YEARS_END_MS = 253_402_300_800_000;

/**
 * `new Date(ms).toISOString()`, formatting only the seconds when the minute is
 * the last one asked for: each call stamps its attempt's start and end, and
 * Date's own formatting was a few percent of a call's CPU.
 */
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= FOUR_DIGIT_YEARS_END_MS) return new Date(ms).toISOString();
  const inMinute = ms % 60_000;
  if (ms - inMinute !== minute.startMs) minute = { startMs: ms - inMinute, prefix: new Date(ms - inMinute).toISOString().slice(0, 17) };
  const seconds = Math.floor(inMinute / 1000);
  const millis = inMinute % 1000;
  return `${minute.prefix}${seconds < 10 ? '0' : ''}${seconds}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

/** The minute `isoMs` read last: `YYYY-MM-DDTHH:MM:` and its time. */
let readMinute = { prefix: '\u0000', ms: NaN };

/**
 * `Date.parse` of an ISO time, faster for the times runner writes
 * (`YYYY-MM-DDTHH:MM:SS.sssZ`, as `isoTime` and `toISOString` write them):
 * the part up to the minute is remembered from the last call, so times of
 * the same minute (a report reads thousands) cost a few character checks.
 */
export function isoMs(text: string): number {
  if (text.length === 24 && text.startsWith(readMinute.prefix) && text.charCodeAt(19) === DOT && text.charCodeAt(23) === Z) {
    const tens = text.charCodeAt(17) - ZERO;
    const seconds = tens * 10 + (text.charCodeAt(18) - ZERO);
    const millis = (text.charCodeAt(20) - ZERO) * 100 + (text.charCodeAt(21) - ZERO) * 10 + (text.charCodeAt(22) - ZERO);
    if (tens >= 0 && tens <= 5 && isDigit(text, 18) && isDigit(text, 20) && isDigit(text, 21) && isDigit(text, 22)) return readMinute.ms + seconds * 1000 + millis;
  }
  const ms = Date.parse(text);
  if (text.length === 24 && Number.isFinite(ms) && text.charCodeAt(16) === COLON) {
    const prefix = text.slice(0, 17);
    readMinute = { prefix, ms: Date.parse(`${prefix}00.000Z`) };
  }
  return ms;
}

const ZERO = 48;
const DOT = 46;
const COLON = 58;
const Z = 90;

function isDigit(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code >= ZERO && code <= ZERO + 9;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * Calls `fire` once `ms` have passed, over as many timers as that takes (an
 * infinite delay never fires; NaN fires at once, as Node's own timers do); the
 * function returned stops it. Each timer is unref'd when `unref` is set.
 */
function startTimer(ms: number, fire: () => void, unref: boolean): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (left: number) => {
    if (left === Infinity) return;
    timer = setTimeout(left > MAX_TIMER_MS ? () => arm(left - MAX_TIMER_MS) : fire, timerMs(left));
    if (unref) timer.unref?.();
  };
  arm(Number.isNaN(ms) ? 0 : ms);
  return () => clearTimeout(timer);
}

/** The real clock: `Date.now()` and timers (unref'd but for `sleep`) that hold any delay. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      const onAbort = () => {
        stop();
        reject(abortReason(signal!));
      };
      const stop = startTimer(
        ms,
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        false,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
  after(ms, fire) {
    return startTimer(ms, fire, true);
  },
  timeout(ms) {
    const controller = new AbortController();
    const clear = startTimer(ms, () => controller.abort(new DOMException(`Timed out after ${ms}ms`, 'TimeoutError')), true);
    return { signal: controller.signal, clear };
  },
};
