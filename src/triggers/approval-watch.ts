import type { StepRecord } from '../artifacts/run-record.js';
import { expireApprovals } from '../scheduler/answer-approval.js';
import type { RunStore, StoredRun } from '../store/run-store.js';
import type { ServiceEvent } from './events.js';

/** What one look at a waiting run finds. */
export type ApprovalCheck =
  | { state: 'waiting' }
  /** Not waiting any more (`runner resume` took it, or it was deleted): nothing left to watch. */
  | { state: 'gone' }
  | { state: 'answered'; stored: StoredRun; steps: Extract<ServiceEvent, { type: 'answered' }>['steps'] };

/**
 * Looks a waiting run up in the store: records the expiry of approvals whose
 * time is up, then says whether any of its waiting steps has an answer.
 */
export function checkApprovals(store: RunStore, runId: string, nowMs: number): ApprovalCheck {
  expireApprovals(store, runId, nowMs);
  const stored = store.getRun(runId);
  if (!stored || stored.run.status !== 'waiting') return { state: 'gone' };
  const answered = stored.steps.map((step) => step.record).filter((step) => step.status === 'waiting' && step.approval?.decision);
  if (answered.length === 0) return { state: 'waiting' };
  return { state: 'answered', stored, steps: answered.map(describeAnswer) };
}

function describeAnswer(step: Omit<StepRecord, 'items'>): Extract<ServiceEvent, { type: 'answered' }>['steps'][number] {
  const approval = step.approval!;
  return { id: step.id, decision: approval.decision!, ...(approval.by !== undefined && { by: approval.by }), ...(approval.at !== undefined && { at: approval.at }) };
}
