import type { Clock } from '../clock.js';

/** A call's progress notification, as the app sent it. */
export interface CallProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** At most this many progress updates per second per call reach Redis (the worker's `job.updateProgress`). @default 4 */
export const PROGRESS_UPDATES_PER_SECOND = 4;

/**
 * Passes progress on at most once per `intervalMs`: the first at once, then
 * the newest of those that came meanwhile when the interval is over. A chatty
 * app (a notification per millisecond) costs Redis a few writes a second.
 * `stop()` drops what is pending and cancels the timer.
 */
export function throttleProgress(
  send: (progress: CallProgress) => void,
  clock: Clock,
  intervalMs = 1000 / PROGRESS_UPDATES_PER_SECOND,
): { push(progress: CallProgress): void; stop(): void } {
  let lastSentMs = -Infinity;
  let pending: CallProgress | undefined;
  let timer: { signal: AbortSignal; clear(): void } | undefined;
  let stopped = false;
  const sendPending = () => {
    timer = undefined;
    if (stopped || !pending) return;
    const progress = pending;
    pending = undefined;
    lastSentMs = clock.now();
    send(progress);
  };
  return {
    push(progress) {
      if (stopped) return;
      pending = progress;
      if (timer) return;
      const waitMs = lastSentMs + intervalMs - clock.now();
      if (waitMs <= 0) return sendPending();
      timer = clock.timeout(waitMs);
      timer.signal.addEventListener('abort', sendPending, { once: true });
    },
    stop() {
      stopped = true;
      pending = undefined;
      timer?.clear();
      timer = undefined;
    },
  };
}
