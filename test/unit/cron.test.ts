import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { formatDiagnostic, RunnerError } from '../../src/errors.js';
import { CronSchedule, MAX_COUNTED_MISSES, nextFireTime, planDue, type Occurrence } from '../../src/triggers/cron.js';
import { lockOccurrence, occurrenceId, pruneOccurrenceLocks } from '../../src/triggers/occurrence-lock.js';
import { OverlapGate } from '../../src/triggers/overlap.js';
import { ScheduleCursorStore } from '../../src/triggers/schedule-cursor.js';
import { runScheduleLoop } from '../../src/triggers/schedule-loop.js';
import { parseWorkflowText } from '../../src/workflow/load.js';
import { FakeClock } from '../helpers/fake-clock.js';

const at = (iso: string) => Date.parse(iso);
const isoOf = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
/** Wall-clock time in Berlin, to read DST cases the way a person would. */
const berlin = (ms: number) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', dateStyle: 'short', timeStyle: 'short', hourCycle: 'h23' }).format(ms);

/** Every fire time in [from, to). */
function firesBetween(schedule: CronSchedule, from: string, to: string): number[] {
  const fires: number[] = [];
  for (let t = schedule.nextAfter(at(from) - 1); t !== undefined && t < at(to); t = schedule.nextAfter(t)) fires.push(t);
  return fires;
}

describe('next fire time: a pure function of expression, timezone and time', () => {
  it('reads five fields (seconds are 0) and six fields (seconds first)', () => {
    // Friday 2026-11-27 13:00 in Berlin → next weekday 09:00 is Monday, 08:00 UTC (CET is UTC+1).
    expect(isoOf(nextFireTime('0 9 * * 1-5', 'Europe/Berlin', at('2026-11-27T12:00:00Z')))).toBe('2026-11-30T08:00:00.000Z');
    expect(isoOf(nextFireTime('*/15 * * * * *', 'UTC', at('2026-01-01T00:00:07Z')))).toBe('2026-01-01T00:00:15.000Z');
    // Strictly after: a time that is itself a fire time gives the next one.
    expect(isoOf(nextFireTime('* * * * * *', 'UTC', at('2026-01-01T00:00:00Z')))).toBe('2026-01-01T00:00:01.000Z');
    expect(isoOf(nextFireTime('0 9 * * *', 'America/New_York', at('2026-07-01T00:00:00Z')))).toBe('2026-07-01T13:00:00.000Z');
  });

  it('uses Vixie-cron OR semantics when both day fields are restricted', () => {
    // The 13th, or any Friday: Monday 2026-04-13 fires as well as the Fridays around it.
    const schedule = new CronSchedule('0 0 13 * 5', 'UTC');
    expect(firesBetween(schedule, '2026-04-06T00:00:00Z', '2026-04-20T00:00:00Z').map(isoOf)).toEqual([
      '2026-04-10T00:00:00.000Z',
      '2026-04-13T00:00:00.000Z',
      '2026-04-17T00:00:00.000Z',
    ]);
  });

  it('DST spring forward (Europe/Berlin 2026-03-29): a fixed-time job in the gap runs right after it', () => {
    const schedule = new CronSchedule('30 2 * * *', 'Europe/Berlin');
    const fires = firesBetween(schedule, '2026-03-28T00:00:00Z', '2026-03-31T00:00:00Z');
    // 02:30 does not exist on the 29th: the job runs at 03:00 CEST (01:00 UTC), once.
    expect(fires.map(isoOf)).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
    expect(fires.map(berlin)).toEqual(['28/03/2026, 02:30', '29/03/2026, 03:00', '30/03/2026, 02:30']);
  });

  it('DST spring forward: an hourly job skips the missing hour (23 fires that day)', () => {
    const schedule = new CronSchedule('0 * * * *', 'Europe/Berlin');
    const day = firesBetween(schedule, '2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z');
    expect(day).toHaveLength(23);
    expect(day.slice(0, 3).map(berlin)).toEqual(['29/03/2026, 00:00', '29/03/2026, 01:00', '29/03/2026, 03:00']);
  });

  it('DST fall back (Europe/Berlin 2026-10-25): a fixed-time job runs once, an hourly job in both repeated hours', () => {
    const fixed = firesBetween(new CronSchedule('30 2 * * *', 'Europe/Berlin'), '2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z');
    expect(fixed.map(isoOf)).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']); // 02:30 CEST, then 02:30 CET next day
    const hourly = firesBetween(new CronSchedule('0 * * * *', 'Europe/Berlin'), '2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z');
    expect(hourly).toHaveLength(25);
    // 02:00 happens twice: 00:00 UTC (CEST) and 01:00 UTC (CET).
    expect(hourly.slice(1, 5).map(isoOf)).toEqual(['2026-10-24T23:00:00.000Z', '2026-10-25T00:00:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T02:00:00.000Z']);
  });

  it('finds the latest fire time at or before a time', () => {
    const hourly = new CronSchedule('0 * * * *', 'UTC');
    expect(isoOf(hourly.latestAtOrBefore(at('2026-01-01T11:00:00Z')))).toBe('2026-01-01T11:00:00.000Z');
    expect(isoOf(hourly.latestAtOrBefore(at('2026-01-01T10:59:59.999Z')))).toBe('2026-01-01T10:00:00.000Z');
  });
});

describe('planDue: on time, late, missed', () => {
  const hourly = new CronSchedule('0 * * * *', 'UTC');
  const everySecond = new CronSchedule('* * * * * *', 'UTC');
  const plan = (schedule: CronSchedule, cursor: string, now: string, catchUp: 'one' | 'none' = 'one') =>
    planDue(schedule, { cursorMs: at(cursor), nowMs: at(now), catchUp, toleranceMs: 5_000 });
  const fired = (occurrences: Occurrence[]) => occurrences.map((o) => `${isoOf(o.scheduledMs)}${o.catchUp ? ' catch-up' : ''}`);

  it('fires an occurrence that is due, and each one a busy loop reached a little late', () => {
    expect(fired(plan(hourly, '2026-01-01T08:59:00Z', '2026-01-01T09:00:00.010Z').fire)).toEqual(['2026-01-01T09:00:00.000Z']);
    const late = plan(everySecond, '2026-01-01T12:00:00Z', '2026-01-01T12:00:03.200Z');
    expect(fired(late.fire)).toEqual(['2026-01-01T12:00:01.000Z', '2026-01-01T12:00:02.000Z', '2026-01-01T12:00:03.000Z']);
    expect(late.missed).toBe(0);
    expect(isoOf(late.cursorMs)).toBe('2026-01-01T12:00:03.200Z');
  });

  it('after downtime, catch-up: one runs the latest missed occurrence once; none runs nothing', () => {
    const one = plan(hourly, '2026-01-01T08:00:00Z', '2026-01-01T11:30:00Z', 'one');
    expect(fired(one.fire)).toEqual(['2026-01-01T11:00:00.000Z catch-up']);
    expect(one.missed).toBe(2);
    const none = plan(hourly, '2026-01-01T08:00:00Z', '2026-01-01T11:30:00Z', 'none');
    expect(none.fire).toEqual([]);
    expect(none.missed).toBe(3);
  });

  it('does not catch up when an occurrence is due on time anyway', () => {
    const result = plan(hourly, '2026-01-01T08:00:00Z', '2026-01-01T11:00:02Z', 'one');
    expect(fired(result.fire)).toEqual(['2026-01-01T11:00:00.000Z']);
    expect(result.missed).toBe(2);
  });

  it('stays cheap after a long downtime of an every-second schedule: it counts misses up to a cap, not all 259,200', () => {
    const lookups = vi.spyOn(everySecond, 'nextAfter');
    onTestFinished(() => lookups.mockRestore());
    const result = plan(everySecond, '2026-01-01T00:00:00Z', '2026-01-04T00:00:00.500Z');
    expect(fired(result.fire)).toEqual([
      '2026-01-03T23:59:56.000Z',
      '2026-01-03T23:59:57.000Z',
      '2026-01-03T23:59:58.000Z',
      '2026-01-03T23:59:59.000Z',
      '2026-01-04T00:00:00.000Z',
    ]);
    expect(result.missed).toBeGreaterThanOrEqual(999);
    // The work is counted, not timed: the on-time occurrences, the misses up to MAX_COUNTED_MISSES, and one lookup that ends each loop.
    expect(lookups.mock.calls.length).toBeLessThanOrEqual(5 + MAX_COUNTED_MISSES + 2);
  });

  it('never fires twice when the clock is set back', () => {
    const result = plan(hourly, '2026-01-01T09:00:00Z', '2026-01-01T08:30:00Z');
    expect(result.fire).toEqual([]);
    expect(isoOf(result.cursorMs)).toBe('2026-01-01T09:00:00.000Z');
  });
});

describe('runScheduleLoop on fake time', () => {
  function startLoop(expression: string, timezone: string, clock: FakeClock, options: { catchUp?: 'one' | 'none'; lastHandled?: string; maxSleepMs?: number } = {}) {
    const controller = new AbortController();
    const fired: { scheduled: string; at: string; catchUp: boolean }[] = [];
    const missed: number[] = [];
    const done = runScheduleLoop({
      schedule: new CronSchedule(expression, timezone),
      catchUp: options.catchUp ?? 'one',
      clock,
      signal: controller.signal,
      lastHandledMs: options.lastHandled ? at(options.lastHandled) : undefined,
      maxSleepMs: options.maxSleepMs,
      onDue: (o) => fired.push({ scheduled: isoOf(o.scheduledMs)!, at: isoOf(clock.now())!, catchUp: o.catchUp }),
      onMissed: (count) => missed.push(count),
    });
    return { fired, missed, stop: async () => (controller.abort(), await done) };
  }

  it('fires each occurrence at its scheduled time, and nothing from before the start', async () => {
    const clock = new FakeClock('2026-01-01T12:00:00.000Z');
    const loop = startLoop('*/10 * * * * *', 'UTC', clock);
    await clock.advance(35_000);
    expect(loop.fired.map((f) => [f.scheduled, f.at])).toEqual([
      ['2026-01-01T12:00:10.000Z', '2026-01-01T12:00:10.000Z'],
      ['2026-01-01T12:00:20.000Z', '2026-01-01T12:00:20.000Z'],
      ['2026-01-01T12:00:30.000Z', '2026-01-01T12:00:30.000Z'],
    ]);
    await loop.stop();
    expect(clock.pending).toBe(0);
  });

  it('wakes in time for a far schedule (sleeps in bounded steps) and follows DST', async () => {
    const clock = new FakeClock('2026-03-27T12:00:00Z');
    const loop = startLoop('30 2 * * *', 'Europe/Berlin', clock, { maxSleepMs: 15 * 60_000 });
    await clock.advance(4 * 24 * 3600_000);
    expect(loop.fired.map((f) => f.at)).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z', // 02:30 fell into the gap: 03:00 CEST
      '2026-03-30T00:30:00.000Z',
      '2026-03-31T00:30:00.000Z',
    ]);
    await loop.stop();
  });

  it('after the machine slept through occurrences: catch-up one runs the latest, once', async () => {
    const clock = new FakeClock('2026-01-01T08:30:00Z');
    const loop = startLoop('0 * * * *', 'UTC', clock, { catchUp: 'one' });
    await clock.advance(30 * 60_000);
    expect(loop.fired.map((f) => f.scheduled)).toEqual(['2026-01-01T09:00:00.000Z']);
    await clock.jump(3 * 3600_000 + 10 * 60_000); // asleep until 12:10
    expect(loop.fired.slice(1)).toEqual([{ scheduled: '2026-01-01T12:00:00.000Z', at: '2026-01-01T12:10:00.000Z', catchUp: true }]);
    expect(loop.missed).toEqual([2]);
    await clock.advance(50 * 60_000);
    expect(loop.fired.map((f) => f.scheduled).slice(2)).toEqual(['2026-01-01T13:00:00.000Z']);
    await loop.stop();
  });

  it('after the machine slept: catch-up none runs nothing missed', async () => {
    const clock = new FakeClock('2026-01-01T08:30:00Z');
    const loop = startLoop('0 * * * *', 'UTC', clock, { catchUp: 'none' });
    await clock.jump(4 * 3600_000); // 12:30
    expect(loop.fired).toEqual([]);
    expect(loop.missed).toEqual([4]);
    await loop.stop();
  });

  it('after a restart, downtime is measured from the persisted last occurrence', async () => {
    const clock = new FakeClock('2026-01-01T09:30:00Z');
    const loop = startLoop('0 * * * *', 'UTC', clock, { lastHandled: '2026-01-01T07:00:00Z' });
    await clock.advance(0);
    expect(loop.fired).toEqual([{ scheduled: '2026-01-01T09:00:00.000Z', at: '2026-01-01T09:30:00.000Z', catchUp: true }]);
    expect(loop.missed).toEqual([1]);
    await loop.stop();
  });
});

describe('overlap', () => {
  function deferred() {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  }

  it('skip drops a due run while one runs; queue runs it after; allow runs both', async () => {
    for (const [mode, expected] of [
      ['skip', ['started', 'skipped']],
      ['queue', ['started', 'queued']],
      ['allow', ['started', 'started']],
    ] as const) {
      const gate = new OverlapGate(mode);
      const first = deferred();
      const second = deferred();
      const started: string[] = [];
      const actions = [
        gate.offer(() => (started.push('first'), first.promise)),
        gate.offer(() => (started.push('second'), second.promise)),
      ];
      expect(actions).toEqual(expected);
      expect(started).toEqual(mode === 'allow' ? ['first', 'second'] : ['first']);
      first.resolve();
      await new Promise((r) => setImmediate(r));
      expect(started).toEqual(mode === 'skip' ? ['first'] : ['first', 'second']);
      second.resolve();
    }
  });

  it('a queue is bounded and can be drained on shutdown', () => {
    const gate = new OverlapGate('queue', 2);
    const never = () => new Promise<void>(() => {});
    expect([gate.offer(never), gate.offer(never), gate.offer(never), gate.offer(never)]).toEqual(['started', 'queued', 'queued', 'skipped']);
    expect(gate.drain()).toBe(2);
  });
});

describe('one occurrence runs once', () => {
  it('has a deterministic id, and of many racing lockers exactly one wins', async () => {
    const id = occurrenceId('nightly-report', at('2026-03-29T01:00:00Z'));
    expect(id).toBe('nightly-report@2026-03-29T01:00:00.000Z');
    const folder = join(await mkdtemp(join(tmpdir(), 'runner-locks-')), 'locks');
    const results = await Promise.all(Array.from({ length: 8 }, () => lockOccurrence(folder, id, Date.now())));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await readdir(folder)).toEqual(['nightly-report@2026-03-29T01-00-00.000Z']);
  });

  it('prunes locks of occurrences older than the retention', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'runner-locks-'));
    await lockOccurrence(folder, occurrenceId('wf', at('2026-01-01T00:00:00Z')), 0);
    await lockOccurrence(folder, occurrenceId('wf', at('2026-01-02T11:00:00Z')), 0);
    expect(await pruneOccurrenceLocks(folder, at('2026-01-02T12:00:00Z'), 24 * 3600_000)).toBe(1);
    expect(await readdir(folder)).toEqual(['wf@2026-01-02T11-00-00.000Z']);
  });

  it('persists the last handled occurrence per schedule, never moving it back', async () => {
    const artifacts = await mkdtemp(join(tmpdir(), 'runner-cursor-'));
    const store = new ScheduleCursorStore(artifacts);
    await Promise.all([store.write('wf', 'k', at('2026-01-01T10:00:00Z')), store.write('wf', 'k', at('2026-01-01T09:00:00Z'))]);
    expect(isoOf(await store.read('wf', 'k'))).toBe('2026-01-01T10:00:00.000Z');
    expect(isoOf(await new ScheduleCursorStore(artifacts).read('wf', 'k'))).toBe('2026-01-01T10:00:00.000Z');
    expect(await store.read('wf', 'other')).toBeUndefined();
  });
});

describe('cron expressions and time zones are checked at load time, with positions', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'runner-cron-'));
  const config = await loadConfig({ cwd: dir, env: {} });
  config.apps.faulty = { name: 'faulty', transport: 'stdio', command: 'node', args: [], env: {}, cwd: dir, roots: [dir] };
  const workflow = (schedule: string) => `name: wf\non:\n  schedule:\n${schedule}steps:\n  - id: a\n    uses: faulty.echo\n`;
  const problemsOf = (text: string): string[] => {
    try {
      parseWorkflowText(text, 'wf.yaml', config);
      return [];
    } catch (error) {
      if (!(error instanceof RunnerError)) throw error;
      return error.diagnostics.map(formatDiagnostic);
    }
  };

  it('accepts five and six fields, nicknames and IANA zones', () => {
    expect(problemsOf(workflow('    - cron: "0 9 * * 1-5"\n      timezone: Europe/Berlin\n    - cron: "*/5 * * * * *"\n    - cron: "@daily"\n'))).toEqual([]);
  });

  it('points at the `cron:` value of a bad expression', () => {
    const problems = problemsOf(workflow('    - cron: "0 9 * *"\n    - cron: "61 * * * *"\n    - cron: "0 0 30 2 *"\n'));
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^wf\.yaml:4:13: invalid cron expression `0 9 \* \*` in `on\.schedule\[0\]`: it needs 5 or 6 fields/);
    expect(problems[0]).toContain('expected: five fields');
    expect(problems[1]).toMatch(/^wf\.yaml:5:13: .*Invalid value for minute: 61/);
    expect(problems[2]).toMatch(/^wf\.yaml:6:13: .*never fires/);
  });

  it('rejects seven fields and unknown time zones', () => {
    const problems = problemsOf(workflow('    - cron: "0 0 9 * * * 2027"\n    - cron: "0 9 * * *"\n      timezone: Mars/Olympus\n'));
    expect(problems[0]).toMatch(/^wf\.yaml:4:13: .*it has 7 fields/);
    expect(problems[1]).toMatch(/^wf\.yaml:6:17: invalid `timezone` .*`Mars\/Olympus` is not an IANA time zone/);
  });
});
