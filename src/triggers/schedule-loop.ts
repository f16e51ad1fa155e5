import type { Clock } from '../clock.js';
import { planDue, type CronSchedule, type Occurrence } from './cron.js';

export interface ScheduleLoopOptions {
  schedule: CronSchedule;
  catchUp: 'one' | 'none';
  clock: Clock;
  /** Ends the loop. */
  signal: AbortSignal;
  /**
   * The last occurrence handled by an earlier process (persisted), so downtime
   * is seen across restarts. Undefined for a schedule seen for the first time:
   * nothing from before the start fires.
   */
  lastHandledMs?: number;
  /** How late an occurrence may be and still count as on time. @default 5000 */
  toleranceMs?: number;
  /** Longest single sleep, so a suspended machine or a clock change is noticed soon. @default 60000 */
  maxSleepMs?: number;
  /** An occurrence is due; must not throw. */
  onDue: (occurrence: Occurrence) => void;
  /** Occurrences were missed (down or asleep). */
  onMissed?: (count: number) => void;
}

/**
 * Fires a schedule's occurrences until `signal` aborts. Each wake-up asks
 * planDue what is due since the last one, so a late timer, a suspended
 * machine or a restart all resolve the same way: on-time occurrences fire,
 * missed ones follow `catch-up`. All waiting goes through the Clock.
 */
export async function runScheduleLoop(options: ScheduleLoopOptions): Promise<void> {
  const { schedule, clock, signal } = options;
  const toleranceMs = options.toleranceMs ?? 5_000;
  const maxSleepMs = options.maxSleepMs ?? 60_000;
  let cursorMs = options.lastHandledMs ?? clock.now();
  while (!signal.aborted) {
    const plan = planDue(schedule, { cursorMs, nowMs: clock.now(), catchUp: options.catchUp, toleranceMs });
    cursorMs = plan.cursorMs;
    if (plan.missed > 0) options.onMissed?.(plan.missed);
    for (const occurrence of plan.fire) options.onDue(occurrence);
    const next = schedule.nextAfter(cursorMs);
    if (next === undefined) return;
    try {
      await clock.sleep(Math.min(Math.max(0, next - clock.now()), maxSleepMs), signal);
    } catch {
      return; // aborted
    }
  }
}
