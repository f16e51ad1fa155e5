import { join } from 'node:path';
import type { ApprovalRecord, RunRecord } from '../artifacts/run-record.js';
import { writeJsonAtomic } from '../artifacts/json-file.js';
import { RunnerError } from '../errors.js';
import type { ApprovalAnswer } from '../store/approval-answer.js';
import { displayRecord, findRun } from '../store/run-history.js';
import type { RunStore } from '../store/run-store.js';
import { describeApproval } from './approval.js';

/** What answering a waiting step recorded, and the run as it is now (secrets shown as `***`). */
export interface AnsweredApproval {
  runId: string;
  stepId: string;
  approval: ApprovalRecord;
  run: RunRecord;
}

/**
 * `runner approve` / `runner deny` (and the UI): records a person's answer to
 * a waiting step in the store, atomically (see RunStore.answerApproval), then
 * brings run.json up to date. Runs nothing: `resume`, or serve, continues the
 * run. Throws `usage` (exit 2) when there is nothing to answer: the run or the
 * step is not waiting, it was answered already, or it expired first.
 */
export function answerWaitingStep(
  store: RunStore,
  artifacts: string,
  request: { run: string; step: string } & Pick<ApprovalAnswer, 'by' | 'via'> & { decision: 'approved' | 'denied'; nowMs: number },
): AnsweredApproval {
  const stored = findRun(store, artifacts, request.run);
  const runId = stored.id;
  const waiting = stored.steps.filter((step) => step.record.status === 'waiting').map((step) => step.record.id);
  const waitingHint = waiting.length > 0 ? `steps waiting in run ${runId}: ${waiting.join(', ')}` : `\`runner runs show ${runId}\` shows where it is`;
  const answer: ApprovalAnswer = { decision: request.decision, at: new Date(request.nowMs).toISOString(), via: request.via, ...(request.by !== undefined && { by: request.by }) };
  const result = store.answerApproval(runId, request.step, answer);
  if (!result.answered) {
    switch (result.reason) {
      case 'no-run':
        throw new RunnerError('not-found', `no run \`${runId}\` under ${artifacts}`, { hint: 'list runs with `runner runs`' });
      case 'run-not-waiting':
        throw new RunnerError('usage', `run ${runId} is not waiting for an approval (its status: ${result.runStatus})`, {
          hint: result.runStatus === 'running' ? 'it is running now; answer once it waits (`runner runs show` says when)' : waitingHint,
        });
      case 'no-step':
        throw new RunnerError('usage', `run ${runId} has no step \`${request.step}\``, { hint: waitingHint });
      case 'step-not-waiting':
        throw new RunnerError('usage', `step ${request.step} of run ${runId} is not waiting for an approval (its status: ${result.stepStatus})`, { hint: waitingHint });
      default:
        throw new RunnerError('usage', `step ${request.step} of run ${runId} was answered already: ${describeApproval(result.approval)}${result.approval.at ? ` at ${result.approval.at}` : ''}`, {
          hint: `\`runner resume ${runId}\` continues the run`,
        });
    }
  }
  const run = rewriteRunFile(store, artifacts, runId);
  if (result.approval.decision === 'expired') {
    throw new RunnerError('usage', `the approval of step ${request.step} of run ${runId} expired at ${result.approval.expiresAt}, before this answer; it counts as denied`, {
      hint: `raise \`policy.approval-timeout\` to give people longer; \`runner resume ${runId} --allow ${stepUses(run, request.step)}\` runs it anyway`,
    });
  }
  return { runId, stepId: request.step, approval: result.approval, run };
}

/** Records the expiry of every approval of the run whose time is up; returns the steps it expired. */
export function expireApprovals(store: RunStore, runId: string, nowMs: number): string[] {
  const stored = store.getRun(runId);
  if (!stored || stored.run.status !== 'waiting') return [];
  const at = new Date(nowMs).toISOString();
  const expired: string[] = [];
  for (const { record } of stored.steps) {
    const approval = record.approval;
    if (record.status !== 'waiting' || !approval || approval.decision || at < approval.expiresAt) continue;
    if (store.answerApproval(runId, record.id, { decision: 'expired', at, via: 'timeout' }).answered) expired.push(record.id);
  }
  return expired;
}

/** run.json again from the store, after an answer changed it there. */
export function rewriteRunFile(store: RunStore, artifacts: string, runId: string): RunRecord {
  const run = displayRecord(findRun(store, artifacts, runId));
  try {
    writeJsonAtomic(join(run.dir, 'run.json'), run);
  } catch {
    // The store holds the answer; run.json follows at the next write (resume), and `runs show` reads the store.
  }
  return run;
}

function stepUses(run: RunRecord, stepId: string): string {
  return run.steps.find((step) => step.id === stepId)?.uses ?? stepId;
}
