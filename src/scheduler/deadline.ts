import { getEventListeners } from 'node:events';
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

/** Idle controllers kept for the next calls: more than a run keeps in flight at once is rarely needed. */
const MAX_IDLE_CONTROLLERS = 512;
const idleControllers: AbortController[] = [];

/**
 * An AbortController for one call, one that an earlier call gave back when
 * there is one. Node makes every AbortSignal as an EventTarget whose prototype
 * it then replaces, and a signal's first listener sets up its event table: a
 * signal made, handed to the SDK (which adds and removes its listener) and
 * dropped costs about 6.5 us of CPU here, one used before about 0.3.
 */
export function takeController(): AbortController {
  return idleControllers.pop() ?? new AbortController();
}

/**
 * Gives a call's controller back for the next call. Only a signal that never
 * aborted and that nobody listens to any more is kept: whoever had it is done
 * with it. Give a controller back only once nothing that saw its signal is
 * still running.
 */
export function giveBackController(controller: AbortController): void {
  const { signal } = controller;
  if (signal.aborted || idleControllers.length >= MAX_IDLE_CONTROLLERS || getEventListeners(signal, 'abort').length > 0) return;
  idleControllers.push(controller);
}
