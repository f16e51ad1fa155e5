import type { RunRecord } from '../artifacts/run-record.js';
import type { Clock } from '../clock.js';
import type { Workflow } from '../workflow/types.js';
import type { ServiceEvent, TriggerRecord } from './events.js';

/** What a trigger needs from the long-running runner it belongs to. */
export interface TriggerHost {
  readonly clock: Clock;
  /** True once shutdown began: nothing new may start. */
  isStopping(): boolean;
  /**
   * Starts a run unless the runner is stopping; `finish` runs after it and may
   * say where the triggering file went. Returns the promise of the whole run
   * (a run that waits for an approval settles it only once it has ended for
   * good), or undefined when nothing started.
   */
  launch(workflow: Workflow, trigger: TriggerRecord, finish?: (record: RunRecord | undefined) => Promise<string | undefined>): Promise<void> | undefined;
  emit(event: ServiceEvent): void;
  /** Tracks trigger work (hashing, claiming, locking) so shutdown waits for it; its errors become warnings. */
  track(work: Promise<void>): void;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
