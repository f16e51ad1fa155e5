import type { ApprovalDecision, ApprovalRecord, RunStatus, StepRecord } from '../artifacts/run-record.js';

/** An answer to a waiting step's approval, as `answerApproval` records it. */
export interface ApprovalAnswer {
  decision: ApprovalDecision;
  /** The user name; absent for an expiry. */
  by?: string;
  /** ISO time of the answer. An `expired` answer is refused before the approval's `expiresAt`. */
  at: string;
  via: NonNullable<ApprovalRecord['via']>;
}

/** Why an answer was not recorded. */
export type ApprovalRefusal =
  | { answered: false; reason: 'no-run' }
  | { answered: false; reason: 'run-not-waiting'; runStatus: RunStatus }
  | { answered: false; reason: 'no-step' }
  | { answered: false; reason: 'step-not-waiting'; stepStatus: StepRecord['status'] }
  | { answered: false; reason: 'answered'; approval: ApprovalRecord }
  | { answered: false; reason: 'not-expired'; approval: ApprovalRecord };

export type ApprovalResult = { answered: true; approval: ApprovalRecord } | ApprovalRefusal;

/**
 * The compare part of a store's compare-and-set answer: given the run's status
 * and the step record as stored now, either the record with the answer in it,
 * or why it is refused. Pure, so SQLite (in one transaction) and Redis (a
 * script that writes only if the record is still the one read) decide alike.
 * A person's answer that comes after `expiresAt` records the expiry instead
 * (the caller sees `decision: 'expired'`).
 */
export function answerInRecord(
  runStatus: RunStatus,
  stored: Omit<StepRecord, 'items'> | undefined,
  answer: ApprovalAnswer,
): { answered: true; approval: ApprovalRecord; record: Omit<StepRecord, 'items'> } | ApprovalRefusal {
  if (runStatus !== 'waiting') return { answered: false, reason: 'run-not-waiting', runStatus };
  if (!stored) return { answered: false, reason: 'no-step' };
  const approval = stored.approval;
  if (stored.status !== 'waiting' || !approval) return { answered: false, reason: 'step-not-waiting', stepStatus: stored.status };
  if (approval.decision) return { answered: false, reason: 'answered', approval };
  // ISO times of one format compare as strings.
  const expired = answer.at >= approval.expiresAt;
  if (answer.decision === 'expired' && !expired) return { answered: false, reason: 'not-expired', approval };
  // Too late for a person's answer: the approval expired before it came, and that is what is recorded.
  const answered: ApprovalRecord =
    expired && answer.decision !== 'expired'
      ? { ...approval, decision: 'expired', at: answer.at, via: 'timeout' }
      : { ...approval, decision: answer.decision, ...(answer.by !== undefined && { by: answer.by }), at: answer.at, via: answer.via };
  return { answered: true, approval: answered, record: { ...stored, approval: answered } };
}
