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
