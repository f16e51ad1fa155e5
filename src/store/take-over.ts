import type { AttemptRecord, ItemRecord, RunRecord, StepErrorRecord, StepRecord } from '../artifacts/run-record.js';
import { mapDeep, mapRecordValues } from '../artifacts/record-values.js';
import type { SecretEntry } from '../config/types.js';
import { RunnerError } from '../errors.js';
import { assembleRecord } from './run-history.js';
import { isOwnerLive } from './run-owner.js';
import type { RunOwner, RunStore, StoredRun } from './run-store.js';
import { fromStoreForm, toStoreForm } from './secret-refs.js';

/**
 * What became of a call whose intent is open, learned after the fact (queue
 * mode: the job's result, kept in Redis after the coordinator died). The
 * fields of the call's record it fills in, as in CallOutcome.
 */
export interface RecoveredCall {
  status: 'succeeded' | 'failed' | 'cancelled';
  attempts: number;
  /** Present once a result arrived (also for a tool error). */
  outputs?: unknown;
  text?: string;
  files?: string[];
  error: StepErrorRecord | null;
  history: AttemptRecord[];
}

/**
 * Makes this process the owner of an earlier run so it can continue it, and
 * returns the run's record with secrets put back. Refuses (`busy`, exit 2)
 * while the process that owns it is alive. Calls the journal shows as sent
 * with no outcome (the runner died while they were in flight) become failed
 * with `outcome: unknown`, in the store too, before anything else happens —
 * unless `recovered` says how such a call ended (by its intent's id).
 */
export function takeOverRun(
  store: RunStore,
  stored: StoredRun,
  options: { owner: RunOwner; nowMs: number; secrets: readonly SecretEntry[]; recovered?: ReadonlyMap<string, RecoveredCall> },
): RunRecord {
  const { run } = stored;
  const claim = store.claimRun(run.id, options.owner, (holder) => isOwnerLive(holder, options.nowMs));
  if (!claim.claimed) {
    throw new RunnerError('busy', `run ${run.id} is still running, in process ${claim.holder.pid} on ${claim.holder.host}; it was not resumed`, {
      hint: `wait for it to end (\`runner runs show ${run.id}\` shows where it is), or stop that process first`,
    });
  }
  try {
    failOpenIntents(store, stored, options.nowMs, options.recovered, (text) => toStoreForm(text, options.secrets));
    return mapRecordValues(assembleRecord(stored), (text) => fromStoreForm(text, options.secrets));
  } catch (error) {
    store.releaseRun(run.id, options.owner);
    throw error;
  }
}

/**
 * Turns every open journal entry of the run into an unknown outcome on its
 * step or item (in `stored` and in the store), or into the outcome
 * `recovered` holds for it. `storeForm` masks secrets in recovered values.
 */
function failOpenIntents(
  store: RunStore,
  stored: StoredRun,
  nowMs: number,
  recovered: ReadonlyMap<string, RecoveredCall> = new Map(),
  storeForm: (text: string) => string = (text) => text,
): void {
  const open = store.openIntents(stored.run.id);
  if (open.length === 0) return;
  const now = new Date(nowMs).toISOString();
  const steps: { position: number; record: Omit<StepRecord, 'items'> }[] = [];
  const items: { stepId: string; record: ItemRecord }[] = [];
  for (const intent of open) {
    const position = stored.steps.findIndex((step) => step.record.id === intent.stepId);
    const step = stored.steps[position];
    if (!step) continue;
    const target = intent.item === null ? step.record : step.items?.find((item) => item.index === intent.item);
    if (!target || target.status === 'succeeded') continue;
    const outcome = recovered.get(intent.id);
    if (outcome) {
      applyRecovered(target, outcome, storeForm);
    } else {
      const error: StepErrorRecord = {
        kind: 'transport',
        message: `the runner stopped while ${intent.uses} was in flight (sent ${intent.sentAt}), so whether it had its effect is unknown`,
        outcome: 'unknown',
      };
      target.status = 'failed';
      target.error = error;
      target.attempts = Math.max(target.attempts, intent.attempt);
      target.history = [...(target.history ?? []), { attempt: intent.attempt, startedAt: intent.sentAt, endedAt: now, error }];
    }
    if (intent.item === null) {
      step.record.endedAt ??= now;
      steps.push({ position, record: step.record });
    } else items.push({ stepId: intent.stepId, record: target as ItemRecord });
  }
  // Every open intent is closed, also those whose step is gone or succeeded meanwhile.
  const settled = open.map((intent) => ({ id: intent.id, outcome: recovered.get(intent.id)?.status === 'succeeded' ? ('succeeded' as const) : ('failed' as const), endedAt: now }));
  store.write({ runId: stored.run.id, steps, items, settled });
}

/**
 * Fills a step or item record in from a recovered call, as the coordinator
 * would have on hearing its outcome; `storeForm` masks secrets in the values
 * (outputs, text, error messages), never in statuses or file names.
 */
function applyRecovered(target: Omit<StepRecord, 'items'> | ItemRecord, outcome: RecoveredCall, storeForm: (text: string) => string): void {
  const maskError = (error: StepErrorRecord | null) => (error ? { ...error, message: storeForm(error.message) } : null);
  target.status = outcome.status;
  target.error = maskError(outcome.error);
  target.attempts = Math.max(target.attempts, outcome.attempts);
  if (outcome.outputs !== undefined) target.outputs = mapDeep(outcome.outputs, storeForm);
  if (outcome.text !== undefined) target.text = storeForm(outcome.text);
  if (outcome.files !== undefined) target.files = outcome.files;
  target.history = [...(target.history ?? []), ...outcome.history.map((attempt) => ({ ...attempt, error: maskError(attempt.error) }))];
}
