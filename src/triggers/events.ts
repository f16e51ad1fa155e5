import type { ApprovalDecision, RunStatus } from '../artifacts/run-record.js';
import type { Drift } from '../lock/types.js';
import type { FileEvent } from './file-settle.js';

/** `trigger` of a run started by a watched file (run.json, `${{ trigger.* }}`). */
export interface WatchTriggerRecord {
  [key: string]: unknown;
  type: 'watch';
  event: FileEvent;
  /** The file the run works on: its place in `processing/` when claimed. */
  path: string;
  /** Where the file appeared. */
  source: string;
  /** When its writes were judged finished (ISO). */
  time: string;
  /** `sha256:<hex>` of the content (not for unlink). */
  hash?: string;
}

/** `trigger` of a run started by a schedule. */
export interface ScheduleTriggerRecord {
  [key: string]: unknown;
  type: 'schedule';
  /** The scheduled time of the occurrence (ISO), not when it actually started. */
  time: string;
  /** `<workflow>@<scheduled ISO time>`: the same in every runner process. */
  occurrence: string;
  cron: string;
  timezone?: string;
  /** Set on the one missed occurrence run after a sleep or downtime. */
  catchUp?: true;
}

export type TriggerRecord = WatchTriggerRecord | ScheduleTriggerRecord;

/** What a long-running runner reports, one event at a time (`--json` prints each as a line). */
export type ServiceEvent =
  | { type: 'ready'; workflows: { name: string; watch?: string[]; schedules?: { cron: string; timezone?: string; next: string | null }[] }[] }
  | { type: 'trigger'; workflow: string; trigger: TriggerRecord; action: 'run' | 'queued' | 'skipped'; reason?: string; runId?: string }
  | { type: 'missed'; workflow: string; cron: string; count: number; catchUp: 'one' | 'none' }
  | { type: 'run-started'; workflow: string; runId: string; dir: string; trigger: TriggerRecord }
  | {
      type: 'run-finished';
      workflow: string;
      runId: string;
      dir: string;
      status: RunStatus;
      durationMs: number;
      summary: string;
      /** With `claim: move`: where the file went (done/ or failed/). */
      movedTo?: string;
    }
  | {
      type: 'recovered';
      workflow: string;
      /** resumed: an interrupted run continues; triggered: a file whose run never started runs now; released: a file left in processing/ moved on. */
      action: 'resumed' | 'triggered' | 'released';
      runId?: string;
      path?: string;
      reason: string;
    }
  /** A waiting run's approvals were answered (or expired): serve continues it now. */
  | { type: 'answered'; workflow: string; runId: string; steps: { id: string; decision: ApprovalDecision; by?: string; at?: string }[] }
  | { type: 'warning'; workflow?: string; message: string }
  /** The workflow's tools differ from runner.lock (reported once per distinct diff); with `stops`, its runs do not start. */
  | { type: 'lock-drift'; workflow: string; file: string; stops: boolean; drifts: Drift[]; diff: string }
  /** A firing whose run did not start (the lock stopped it); the drift itself is reported once, by `lock-drift`. */
  | { type: 'run-refused'; workflow: string; runId: string; reason: string }
  | { type: 'stopping'; reason: string; inFlight: number; graceMs: number; dropped: number }
  | { type: 'cancelling'; runs: string[] }
  | { type: 'stopped'; cancelled: number };
