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

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** The real clock: `Date.now()` and unref'd timers, so it never keeps the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
  after(ms, fire) {
    const timer = setTimeout(fire, Math.max(0, ms));
    timer.unref?.();
    return () => clearTimeout(timer);
  },
  timeout(ms) {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      controller.abort(new DOMException(`Timed out after ${ms}ms`, 'TimeoutError'));
    }, Math.max(0, ms));
    timer.unref?.();
    return { signal: controller.signal, clear: () => clearTimeout(timer) };
  },
};
