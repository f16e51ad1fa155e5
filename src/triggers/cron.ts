import type { Cron } from 'croner';
import { compileCron } from '../workflow/cron-syntax.js';

// Fire times of a cron schedule as pure functions of (expression, timezone,
// time): no clock is read here. DST follows croner: a fixed-time job
// (`30 2 * * *`) whose time falls in a spring-forward gap runs at the first
// valid time after it, and once when an autumn hour repeats; interval jobs
// (`*/30 * * * *`) skip the gap and run in both repeated hours.

/** One scheduled fire of a schedule. */
export interface Occurrence {
  scheduledMs: number;
  /** True when this is the one missed occurrence run late after a sleep or downtime (`catch-up: one`). */
  catchUp: boolean;
}

/** A compiled schedule. */
export class CronSchedule {
  private readonly cron: Cron;

  constructor(
    readonly expression: string,
    readonly timezone?: string,
  ) {
    this.cron = compileCron(expression, timezone);
  }

  /** The first fire time strictly after `afterMs`; undefined when there is none. */
  nextAfter(afterMs: number): number | undefined {
    return this.cron.nextRun(new Date(afterMs))?.getTime();
  }

  /** The last fire time at or before `atMs`; undefined when there is none. */
  latestAtOrBefore(atMs: number): number | undefined {
    return this.cron.previousRuns(1, new Date(atMs + 1))[0]?.getTime();
  }
}

/** The first fire time of `expression` in `timezone` strictly after `afterMs`. */
export function nextFireTime(expression: string, timezone: string | undefined, afterMs: number): number | undefined {
  return new CronSchedule(expression, timezone).nextAfter(afterMs);
}

/** What is due at one moment, and what was missed. */
export interface DuePlan {
  /** Occurrences to fire now, oldest first. */
  fire: Occurrence[];
  /** Occurrences that were not fired because the runner was down or asleep (capped at MAX_COUNTED_MISSES). */
  missed: number;
  /** Everything up to here is handled. */
  cursorMs: number;
}

export interface PlanDueOptions {
  /** Occurrences at or before this were handled already. */
  cursorMs: number;
  nowMs: number;
  catchUp: 'one' | 'none';
  /** An occurrence at most this late still counts as on time; older ones were missed. */
  toleranceMs: number;
}

/** Most on-time occurrences fired at once (a six-field schedule inside the tolerance). */
const MAX_BURST = 100;
/** Missed occurrences are counted up to here, for the log line. */
export const MAX_COUNTED_MISSES = 1000;

/**
 * Decides what fires when the schedule is looked at `nowMs`: every occurrence
 * since the cursor that is at most `toleranceMs` late fires; older ones were
 * missed (the process was down, the machine asleep). With `catch-up: one` the
 * latest missed one fires instead, when nothing fires on time; `none` drops them.
 */
export function planDue(schedule: CronSchedule, options: PlanDueOptions): DuePlan {
  const { cursorMs, nowMs, catchUp, toleranceMs } = options;
  const onTimeAfter = Math.max(cursorMs, nowMs - toleranceMs - 1);
  const fire: Occurrence[] = [];
  for (let t = schedule.nextAfter(onTimeAfter); t !== undefined && t <= nowMs && fire.length < MAX_BURST; t = schedule.nextAfter(t)) {
    fire.push({ scheduledMs: t, catchUp: false });
  }
  let missed = 0;
  let latestMissed: number | undefined;
  if (onTimeAfter > cursorMs) {
    const latest = schedule.latestAtOrBefore(onTimeAfter);
    if (latest !== undefined && latest > cursorMs) {
      latestMissed = latest;
      for (let t = schedule.nextAfter(cursorMs); t !== undefined && t <= onTimeAfter && missed < MAX_COUNTED_MISSES; t = schedule.nextAfter(t)) missed++;
    }
  }
  if (fire.length === 0 && latestMissed !== undefined && catchUp === 'one') {
    fire.push({ scheduledMs: latestMissed, catchUp: true });
    missed--;
  }
  return { fire, missed, cursorMs: Math.max(cursorMs, nowMs) };
}
