import { userInfo } from 'node:os';
import type { ApprovalRecord, StepRecord } from '../artifacts/run-record.js';

/** What a headless `ask` comes to under `headless-ask: wait`. */
export interface ApprovalState {
  action: 'allow' | 'deny' | 'wait';
  /** Appended to the policy reason: `approved by ana`, `waiting for approval`… */
  reason: string;
}

/**
 * Decides a headless ask from the step's approval: approved → allow; denied
 * or expired → deny; none yet → one is requested (expiring after `timeoutMs`)
 * and the step waits. One approval covers the whole step, all its foreach items.
 */
export function settleApproval(stepRecord: StepRecord, nowMs: number, timeoutMs: number): ApprovalState {
  let approval = stepRecord.approval;
  if (approval && !approval.decision && nowMs >= Date.parse(approval.expiresAt)) {
    approval = stepRecord.approval = { ...approval, decision: 'expired', at: new Date(nowMs).toISOString(), via: 'timeout' };
  }
  if (!approval) {
    approval = stepRecord.approval = { requestedAt: new Date(nowMs).toISOString(), expiresAt: new Date(nowMs + timeoutMs).toISOString() };
  }
  return { action: actionOf(approval), reason: describeApproval(approval) };
}

function actionOf(approval: ApprovalRecord): ApprovalState['action'] {
  if (approval.decision === 'approved') return 'allow';
  return approval.decision ? 'deny' : 'wait';
}

/** `approved by ana`, `denied by ana`, `approval expired unanswered`, `waiting for approval`. */
export function describeApproval(approval: ApprovalRecord): string {
  switch (approval.decision) {
    case 'approved':
      return `approved by ${approval.by ?? 'unknown'}`;
    case 'denied':
      return `denied by ${approval.by ?? 'unknown'}`;
    case 'expired':
      return `approval expired unanswered at ${approval.expiresAt}`;
    default:
      return 'waiting for approval';
  }
}

/** The longest user name recorded (RUNNER_USER is free text). */
const MAX_USER_LENGTH = 100;

/**
 * Who answers an approval from this process: `RUNNER_USER` when set (a shared
 * service account, a container whose OS user says nothing), else the OS
 * account name. Control characters are dropped, so the record stays one line.
 */
export function approverName(env: NodeJS.ProcessEnv): string {
  let name = env.RUNNER_USER?.trim();
  if (!name) {
    try {
      name = userInfo().username;
    } catch {
      name = 'unknown'; // no passwd entry for this uid (some containers)
    }
  }
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  return name.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, MAX_USER_LENGTH) || 'unknown';
}

/** The commands that answer a waiting step, for progress lines and messages. */
export function answerCommands(runId: string, stepId: string): string {
  return `\`runner approve ${runId} ${stepId}\` or \`runner deny ${runId} ${stepId}\``;
}
