import { CallAbortReason } from '../apps/call-error.js';
import type { Clock } from '../clock.js';

/**
 * A signal that aborts when `parent` does (with its reason), or after `ms` on
 * the clock with the reason `onExpiry` makes. `clear` removes the timer and
 * the listener; call it when the wait is over.
 */
export function withDeadline(parent: AbortSignal, clock: Clock, ms: number, onExpiry: () => CallAbortReason): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = clock.timeout(ms);
  const onParent = () => controller.abort(parent.reason);
  const onTimer = () => controller.abort(onExpiry());
  if (parent.aborted) onParent();
  parent.addEventListener('abort', onParent, { once: true });
  timer.signal.addEventListener('abort', onTimer, { once: true });
  return {
    signal: controller.signal,
    clear() {
      parent.removeEventListener('abort', onParent);
      timer.signal.removeEventListener('abort', onTimer);
      timer.clear();
    },
  };
}
