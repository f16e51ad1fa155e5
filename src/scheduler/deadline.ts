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

const followers = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

/**
 * Calls `onAbort` with the signal's reason when `signal` aborts (at once when
 * it has); the function returned stops following. All followers of a signal
 * share one listener on it: a run's signal is followed by every call in
 * flight, and each addEventListener/removeEventListener costs far more than a
 * Set's add and delete.
 */
export function followAbort(signal: AbortSignal, onAbort: (reason: unknown) => void): () => void {
  if (signal.aborted) {
    onAbort(signal.reason);
    return () => {};
  }
  let set = followers.get(signal);
  if (!set) {
    const created = new Set<(reason: unknown) => void>();
    followers.set(signal, (set = created));
    signal.addEventListener('abort', () => {
      for (const follower of [...created]) follower(signal.reason);
      created.clear();
    }, { once: true });
  }
  set.add(onAbort);
  const following = set;
  return () => void following.delete(onAbort);
}
