import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CronTrigger } from '../../src/triggers/cron-trigger.js';
import type { ServiceEvent, TriggerRecord } from '../../src/triggers/events.js';
import { fileJobId, occurrenceJobId, scheduleQueueName, type FiringHandoff, type OccurrenceJob } from '../../src/triggers/handoff.js';
import type { TriggerHost } from '../../src/triggers/host.js';
import { occurrenceId } from '../../src/triggers/occurrence-lock.js';
import { ScheduleCursorStore } from '../../src/triggers/schedule-cursor.js';
import { takeFirings } from '../../src/triggers/take-firings.js';
import type { ScheduleTrigger, Workflow } from '../../src/workflow/types.js';
import { FakeClock } from '../helpers/fake-clock.js';

// Queue mode's hand-over on fake time, with an in-memory stand-in for BullMQ's contract (one job
// per id; each job taken by one consumer); test/integration/queue-triggers.test.ts runs the real one.

type Take = (data: unknown, addedAtMs: number) => Promise<void>;

/** One job per (queue, id), handed to the queue's consumers in turn, as free BullMQ workers take them. */
class MemoryHandoff implements FiringHandoff {
  readonly offers: string[] = [];
  readonly jobs = new Set<string>();
  readonly consumers = new Map<string, Take[]>();
  private turn = 0;

  constructor(private readonly clock: FakeClock) {}

  async offer(queue: string, id: string, data: object): Promise<void> {
    this.offers.push(id);
    if (this.jobs.has(`${queue}/${id}`)) return;
    this.jobs.add(`${queue}/${id}`);
    const takers = this.consumers.get(queue) ?? [];
    await takers[this.turn++ % takers.length]!(structuredClone(data), this.clock.now());
  }

  async consume(queue: string, take: Take): Promise<void> {
    this.consumers.set(queue, [...(this.consumers.get(queue) ?? []), take]);
  }

  async stopTaking(): Promise<void> {}
  async close(): Promise<void> {}
}

/** A runner process as a trigger sees it: the runs it launched and the events it emitted. */
function processHost(clock: FakeClock) {
  const launched: TriggerRecord[] = [];
  const events: ServiceEvent[] = [];
  let stopping = false;
  const host: TriggerHost = {
    clock,
    isStopping: () => stopping,
    launch: (_workflow, trigger) => (launched.push(trigger), Promise.resolve()),
    emit: (event) => events.push(event),
    track: (work) => void work.catch(() => undefined),
  };
  return { host, launched, events, stop: () => (stopping = true) };
}

const spec: ScheduleTrigger = { cron: '* * * * * *', timezone: 'UTC', overlap: 'allow', catchUp: 'one' };
const workflow = { name: 'tick', on: { schedule: [spec] } } as unknown as Workflow;

describe('queue mode: one occurrence runs once across runner processes', () => {
  it('two processes offer every occurrence; each runs in exactly one of them, and no lock file is taken', async () => {
    const clock = new FakeClock('2026-01-01T12:00:00.000Z');
    const artifacts = await mkdtemp(join(tmpdir(), 'runner-handoff-'));
    const handoff = new MemoryHandoff(clock);
    const cursors = new ScheduleCursorStore(artifacts);
    const locksFolder = join(artifacts, '.runner', 'locks');
    const controller = new AbortController();
    const processes = [processHost(clock), processHost(clock)];
    for (const { host } of processes) {
      const cron = new CronTrigger(workflow, spec, 0, host, { cursors, locksFolder, handoff });
      await takeFirings(handoff, host, workflow, undefined, [cron]);
      await cron.start(controller.signal);
    }
    await clock.advance(10_000);
    controller.abort();

    const ran = processes.flatMap(({ launched }) => launched.map((trigger) => trigger.occurrence));
    const expected = Array.from({ length: 10 }, (_, second) => occurrenceId('tick', Date.parse('2026-01-01T12:00:01.000Z') + second * 1000));
    expect(ran.sort()).toEqual(expected);
    expect(processes.every(({ launched }) => launched.length > 0)).toBe(true);
    expect(handoff.offers).toHaveLength(20); // both offered each one
    expect(processes.flatMap(({ events }) => events)).toEqual([]);
    expect(existsSync(locksFolder)).toBe(false);
  });

  it('an occurrence that waited in the queue past the late tolerance counts as missed; an unknown entry is skipped', async () => {
    const clock = new FakeClock('2026-01-01T12:00:00.000Z');
    const artifacts = await mkdtemp(join(tmpdir(), 'runner-handoff-'));
    const handoff = new MemoryHandoff(clock);
    const { host, launched, events } = processHost(clock);
    const cron = new CronTrigger(workflow, spec, 0, host, { cursors: new ScheduleCursorStore(artifacts), locksFolder: join(artifacts, 'locks'), handoff });
    await takeFirings(handoff, host, workflow, undefined, [cron]);
    const [take] = handoff.consumers.get(scheduleQueueName('tick'))!;
    const trigger = { type: 'schedule' as const, time: '2026-01-01T11:00:00.000Z', occurrence: 'tick@2026-01-01T11:00:00.000Z', cron: spec.cron };
    await take!({ key: cron.key, trigger } satisfies OccurrenceJob, clock.now() - 3_600_000);
    await take!({ key: '0|0 * * * *|UTC', trigger } satisfies OccurrenceJob, clock.now());
    expect(launched).toEqual([]);
    expect(events.map((event) => (event.type === 'trigger' ? event.reason : event.type))).toEqual([
      'missed: it waited 3600s in the queue before a runner process took it',
      "its schedule entry (0|0 * * * *|UTC) is not in this process's copy of the workflow: run the same workflow files in every runner process",
    ]);
  });

  it('a process that is stopping hands a firing back instead of dropping it', async () => {
    const clock = new FakeClock('2026-01-01T12:00:00.000Z');
    const artifacts = await mkdtemp(join(tmpdir(), 'runner-handoff-'));
    const handoff = new MemoryHandoff(clock);
    const runner = processHost(clock);
    const cron = new CronTrigger(workflow, spec, 0, runner.host, { cursors: new ScheduleCursorStore(artifacts), locksFolder: join(artifacts, 'locks'), handoff });
    await takeFirings(handoff, runner.host, workflow, undefined, [cron]);
    runner.stop();
    const [take] = handoff.consumers.get(scheduleQueueName('tick'))!;
    const trigger = { type: 'schedule' as const, time: '2026-01-01T12:00:00.000Z', occurrence: 'tick@2026-01-01T12:00:00.000Z', cron: spec.cron };
    await expect(take!({ key: cron.key, trigger }, clock.now())).rejects.toThrow('this runner process is stopping');
    expect(runner.launched).toEqual([]);
  });

  it('job ids are deterministic and hold no `:` (BullMQ refuses it in custom ids)', () => {
    expect(occurrenceJobId('nightly@2026-12-01T06:00:00.000Z')).toBe('nightly@2026-12-01T06-00-00.000Z');
    const id = fileJobId('/shared/inbox/a.png', 'ab'.repeat(32), 1764576000123.5);
    expect(id).toMatch(/^file-[0-9a-f]{40}$/);
    expect(fileJobId('/shared/inbox/a.png', 'ab'.repeat(32), 1764576000123.5)).toBe(id);
    // The same file dropped again (a new inode change time) is a new firing.
    expect(fileJobId('/shared/inbox/a.png', 'ab'.repeat(32), 1764576009999)).not.toBe(id);
  });
});

describe('lock files: one occurrence runs once across runner processes', () => {
  it('a process that is stopping takes no occurrence, so one that is not runs each', async () => {
    const clock = new FakeClock('2026-01-01T12:00:00.000Z');
    const artifacts = await mkdtemp(join(tmpdir(), 'runner-locks-'));
    const cursors = new ScheduleCursorStore(artifacts);
    const locksFolder = join(artifacts, '.runner', 'locks');
    const controller = new AbortController();
    const stopping = processHost(clock);
    const live = processHost(clock);
    stopping.stop();
    // The stopping process's schedule first: it used to take each lock, then skip the run as stopping.
    for (const { host } of [stopping, live]) await new CronTrigger(workflow, spec, 0, host, { cursors, locksFolder }).start(controller.signal);
    await clock.advance(5_000);
    controller.abort();
    const expected = Array.from({ length: 5 }, (_, second) => occurrenceId('tick', Date.parse('2026-01-01T12:00:01.000Z') + second * 1000));
    await expect.poll(() => live.launched.map((trigger) => trigger.occurrence).sort()).toEqual(expected);
    expect(stopping.launched).toEqual([]);
    expect(stopping.events.map((event) => (event.type === 'trigger' ? event.reason : event.type))).toEqual(Array(5).fill('the runner is stopping'));
  });
});
