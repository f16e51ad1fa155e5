import type { ItemRecord, RunRecord, StepRecord } from '../artifacts/run-record.js';
import type { Step, Workflow } from '../workflow/types.js';

/** What `runner resume` continues: the run's record (secrets put back) and whether unknown outcomes run again. */
export interface ResumeOptions {
  record: RunRecord;
  rerunUnknown: boolean;
}

/** The steps of a resumed run, and what is kept of the earlier executions. */
export interface ResumedSteps {
  steps: StepRecord[];
  /** Steps that are done already: they are not run again and only release their dependents. */
  kept: Set<string>;
  /** Steps that run (again) in this resume, in workflow order. */
  rerun: string[];
  /** foreach steps that run again: their earlier items, by index (succeeded ones are kept). */
  earlierItems: Map<string, ItemRecord[]>;
}

const UNKNOWN_NOTE = ' (not run again: its outcome is unknown; resume with --rerun-unknown to run it anyway)';

/**
 * Decides, step by step, what a resume keeps: a succeeded step as it is; a
 * step whose side effect may have happened (outcome unknown) unless
 * `rerunUnknown`; everything else runs again, keeping its attempt history. A
 * foreach step runs again item by item: its succeeded items (and its unknown
 * ones, without `rerunUnknown`) are kept, the rest run.
 */
export function resumeSteps(previous: RunRecord, workflow: Workflow, options: Pick<ResumeOptions, 'rerunUnknown'>): ResumedSteps {
  const kept = new Set<string>();
  const rerun: string[] = [];
  const earlierItems = new Map<string, ItemRecord[]>();
  const steps = workflow.steps.map((step): StepRecord => {
    const before = previous.steps.find((candidate) => candidate.id === step.id);
    if (before?.status === 'succeeded') {
      kept.add(step.id);
      return before;
    }
    if (before && !before.items && before.error?.outcome === 'unknown' && !options.rerunUnknown) {
      kept.add(step.id);
      const message = before.error.message.endsWith(UNKNOWN_NOTE) ? before.error.message : before.error.message + UNKNOWN_NOTE;
      return { ...before, error: { ...before.error, message } };
    }
    rerun.push(step.id);
    if (before?.items) earlierItems.set(step.id, before.items);
    // An approval and its answer carry over: an approved step runs now, a denied one is denied without asking again.
    return { ...pendingRecord(step), history: before?.history ?? [], ...(before?.approval && { approval: before.approval }) };
  });
  return { steps, kept, rerun, earlierItems };
}

/** Whether a foreach item of an earlier execution is kept instead of run again. */
export function keepsItem(item: ItemRecord | undefined, rerunUnknown: boolean): item is ItemRecord {
  if (!item) return false;
  return item.status === 'succeeded' || (item.error?.outcome === 'unknown' && !rerunUnknown);
}

/** A foreach item that has not run. */
export function pendingItem(index: number, earlier?: ItemRecord): ItemRecord {
  return { index, status: 'pending', attempts: 0, args: null, outputs: null, text: '', files: [], error: null, history: earlier?.history ?? [] };
}

/** A step that has not run. */
export function pendingRecord(step: Step): StepRecord {
  return {
    id: step.id,
    uses: step.uses,
    status: 'pending',
    attempts: 0,
    startedAt: null,
    endedAt: null,
    args: null,
    outputs: null,
    text: '',
    files: [],
    policy: null,
    error: null,
    history: [],
    needs: step.needs,
    ...(step.declaredNeeds && { declaredNeeds: step.declaredNeeds }),
  };
}

/** How long a run was active before this execution: its recorded duration, else up to its last step's end. */
export function activeMsBefore(previous: RunRecord): number {
  if (previous.durationMs !== undefined) return previous.durationMs;
  const ends = previous.steps.map((step) => Date.parse(step.endedAt ?? '')).filter((ms) => !Number.isNaN(ms));
  const start = Date.parse(previous.startedAt);
  return ends.length > 0 && !Number.isNaN(start) ? Math.max(0, Math.max(...ends) - start) : 0;
}
