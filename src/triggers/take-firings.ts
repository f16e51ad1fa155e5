import type { Workflow } from '../workflow/types.js';
import type { CronTrigger } from './cron-trigger.js';
import type { FileTrigger } from './file-trigger.js';
import { scheduleQueueName, watchQueueName, type FileJob, type FiringHandoff, type OccurrenceJob } from './handoff.js';
import { messageOf } from '../errors.js';
import type { TriggerHost } from './host.js';

/**
 * Queue mode: takes this process's share of a workflow's firings, from the
 * queues of the triggers it serves (a `runner watch` process takes no
 * occurrences). Only processes serving the workflow consume its queues.
 */
export async function takeFirings(handoff: FiringHandoff, host: TriggerHost, workflow: Workflow, file: FileTrigger | undefined, crons: CronTrigger[]): Promise<void> {
  const guarded =
    (take: (data: unknown, addedAtMs: number) => void | Promise<void>) =>
    async (data: unknown, addedAtMs: number): Promise<void> => {
      // Thrown, so BullMQ hands the firing to a process that is not stopping (a rolling restart loses nothing).
      if (host.isStopping()) throw new Error('this runner process is stopping');
      try {
        await take(data, addedAtMs);
      } catch (error) {
        // Never thrown on: a firing handed back after its run started would run twice.
        host.emit({ type: 'warning', workflow: workflow.name, message: messageOf(error) });
      }
    };
  if (crons.length > 0) {
    await handoff.consume(
      scheduleQueueName(workflow.name),
      guarded((data, addedAtMs) => {
        const job = data as OccurrenceJob;
        const cron = crons.find((entry) => entry.key === job.key);
        if (cron) return cron.takeQueued(job, addedAtMs);
        const reason = `its schedule entry (${job.key}) is not in this process's copy of the workflow: run the same workflow files in every runner process`;
        host.emit({ type: 'trigger', workflow: workflow.name, trigger: job.trigger, action: 'skipped', reason });
      }),
    );
  }
  if (file) await handoff.consume(watchQueueName(workflow.name), guarded((data) => file.takeQueued(data as FileJob)));
}
