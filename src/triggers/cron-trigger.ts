import type { ScheduleTrigger, Workflow } from '../workflow/types.js';
import { CronSchedule, type Occurrence } from './cron.js';
import type { ScheduleTriggerRecord } from './events.js';
import { occurrenceJobId, scheduleQueueName, type FiringHandoff, type OccurrenceJob } from './handoff.js';
import { messageOf } from '../errors.js';
import { iso, type TriggerHost } from './host.js';
import { lockOccurrence, occurrenceId } from './occurrence-lock.js';
import { OverlapGate } from './overlap.js';
import { scheduleKey, type ScheduleCursorStore } from './schedule-cursor.js';
import { runScheduleLoop } from './schedule-loop.js';

export interface CronTriggerOptions {
  cursors: ScheduleCursorStore;
  /** `<artifacts>/.runner/locks`. */
  locksFolder: string;
  /** How late an occurrence may fire and still count as on time. @default 5000 */
  lateToleranceMs?: number;
  /** Queue mode: occurrences go through BullMQ, one job per occurrence id, instead of lock files. */
  handoff?: FiringHandoff;
}

/**
 * One `on.schedule` entry of a workflow: fires its occurrences (catch-up
 * included), takes each occurrence's lock (or, in queue mode, offers its job)
 * so one runner process runs it, records its progress for restarts, and lets
 * `overlap` decide the rest.
 */
export class CronTrigger {
  readonly schedule: CronSchedule;
  /** The entry's key (index, expression, zone): the same in every process serving the same workflow file. */
  readonly key: string;
  private readonly gate: OverlapGate;

  constructor(
    private readonly workflow: Workflow,
    private readonly spec: ScheduleTrigger,
    index: number,
    private readonly host: TriggerHost,
    private readonly options: CronTriggerOptions,
  ) {
    this.schedule = new CronSchedule(spec.cron, spec.timezone);
    this.gate = new OverlapGate(spec.overlap);
    this.key = scheduleKey(index, spec.cron, spec.timezone);
  }

  /** Starts firing until `signal` aborts; resolves with the next fire time and the promise of the loop. */
  async start(signal: AbortSignal): Promise<{ next: number | undefined; loop: Promise<void> }> {
    const { workflow, spec, host } = this;
    const lastHandledMs = await this.options.cursors.read(workflow.name, this.key);
    const loop = runScheduleLoop({
      schedule: this.schedule,
      catchUp: spec.catchUp,
      clock: host.clock,
      signal,
      lastHandledMs,
      toleranceMs: this.options.lateToleranceMs,
      onDue: (occurrence) => host.track(this.onDue(occurrence)),
      onMissed: (count) => host.emit({ type: 'missed', workflow: workflow.name, cron: spec.cron, count, catchUp: spec.catchUp }),
    });
    return { next: this.schedule.nextAfter(Math.max(host.clock.now(), lastHandledMs ?? 0)), loop };
  }

  /** Forgets queued runs that have not started (shutdown); returns how many. */
  drain(): number {
    return this.gate.drain();
  }

  private async onDue(occurrence: Occurrence): Promise<void> {
    const { workflow, spec, host } = this;
    const id = occurrenceId(workflow.name, occurrence.scheduledMs);
    const trigger: ScheduleTriggerRecord = {
      type: 'schedule',
      time: iso(occurrence.scheduledMs),
      occurrence: id,
      cron: spec.cron,
      ...(spec.timezone !== undefined && { timezone: spec.timezone }),
      ...(occurrence.catchUp && { catchUp: true as const }),
    };
    const skip = (reason: string) => host.emit({ type: 'trigger', workflow: workflow.name, trigger, action: 'skipped', reason });
    this.options.cursors.write(workflow.name, this.key, occurrence.scheduledMs).catch((error: unknown) => {
      host.emit({ type: 'warning', workflow: workflow.name, message: `cannot record the schedule's progress: ${messageOf(error)}` });
    });
    const { handoff } = this.options;
    if (handoff) {
      // Every process offers the occurrence; BullMQ keeps one job per id and one process takes it (takeQueued).
      const job: OccurrenceJob = { key: this.key, trigger };
      return handoff.offer(scheduleQueueName(workflow.name), occurrenceJobId(id), job).catch((error: unknown) => skip(`it could not be queued: ${messageOf(error)}`));
    }
    // A process that is stopping would take the occurrence only to skip it: another one, still serving, runs it.
    if (host.isStopping()) return skip('the runner is stopping');
    let locked: boolean;
    try {
      locked = await lockOccurrence(this.options.locksFolder, id, host.clock.now());
    } catch (error) {
      return skip(`its lock cannot be taken: ${messageOf(error)}`);
    }
    if (!locked) return skip('another runner process took this occurrence');
    this.run(trigger);
  }

  /**
   * An occurrence's job this process took (queue mode). One that waited in the
   * queue longer than the late tolerance (no process took it in time: the
   * cluster was down) counts as missed, as it would without a queue.
   */
  takeQueued(job: OccurrenceJob, addedAtMs: number): void {
    const { workflow, host } = this;
    const waitedMs = host.clock.now() - addedAtMs;
    if (waitedMs > (this.options.lateToleranceMs ?? 5_000)) {
      const reason = `missed: it waited ${Math.round(waitedMs / 1000)}s in the queue before a runner process took it`;
      host.emit({ type: 'trigger', workflow: workflow.name, trigger: job.trigger, action: 'skipped', reason });
      return;
    }
    this.run(job.trigger);
  }

  /** Starts this process's run of an occurrence, or queues or skips it under `overlap`. */
  private run(trigger: ScheduleTriggerRecord): void {
    const { workflow, host } = this;
    const skip = (reason: string) => host.emit({ type: 'trigger', workflow: workflow.name, trigger, action: 'skipped', reason });
    if (host.isStopping()) return skip('the runner is stopping');
    const action = this.gate.offer(() => host.launch(workflow, trigger) ?? Promise.resolve());
    if (action === 'queued') host.emit({ type: 'trigger', workflow: workflow.name, trigger, action, reason: 'overlap: queue (the previous run has not ended)' });
    if (action === 'skipped') skip(`overlap: ${this.gate.mode} (the previous run has not ended${this.gate.mode === 'queue' ? '; the queue is full' : ''})`);
  }
}
