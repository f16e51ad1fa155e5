import type { ItemRecord, RunRecord, StepErrorRecord, StepRecord } from '../artifacts/run-record.js';
import { mapRecordValues } from '../artifacts/record-values.js';
import type { SecretEntry } from '../config/types.js';
import { RunnerError } from '../errors.js';
import { assembleRecord } from './run-history.js';
import { isOwnerLive } from './run-owner.js';
import type { RunOwner, RunStore, StoredRun } from './run-store.js';
import { fromStoreForm } from './secret-refs.js';

/**
 * Makes this process the owner of an earlier run so it can continue it, and
 * returns the run's record with secrets put back. Refuses (`busy`, exit 2)
 * while the process that owns it is alive. Calls the journal shows as sent
 * with no outcome (the runner died while they were in flight) become failed
 * with `outcome: unknown`, in the store too, before anything else happens.
 */
export function takeOverRun(store: RunStore, stored: StoredRun, options: { owner: RunOwner; nowMs: number; secrets: readonly SecretEntry[] }): RunRecord {
  const { run } = stored;
  const claim = store.claimRun(run.id, options.owner, (holder) => isOwnerLive(holder, options.nowMs));
  if (!claim.claimed) {
    throw new RunnerError('busy', `run ${run.id} is still running, in process ${claim.holder.pid} on ${claim.holder.host}; it was not resumed`, {
      hint: `wait for it to end (\`runner runs show ${run.id}\` shows where it is), or stop that process first`,
    });
  }
  try {
    failOpenIntents(store, stored, options.nowMs);
    return mapRecordValues(assembleRecord(stored), (text) => fromStoreForm(text, options.secrets));
  } catch (error) {
    store.releaseRun(run.id, options.owner);
    throw error;
  }
}

/** Turns every open journal entry of the run into an unknown outcome on its step or item (in `stored` and in the store). */
function failOpenIntents(store: RunStore, stored: StoredRun, nowMs: number): void {
  const open = store.openIntents(stored.run.id);
  if (open.length === 0) return;
  const now = new Date(nowMs).toISOString();
  const steps: { position: number; record: Omit<StepRecord, 'items'> }[] = [];
  const items: { stepId: string; record: ItemRecord }[] = [];
  for (const intent of open) {
    const position = stored.steps.findIndex((step) => step.record.id === intent.stepId);
    const step = stored.steps[position];
    if (!step) continue;
    const error: StepErrorRecord = {
      kind: 'transport',
      message: `the runner stopped while ${intent.uses} was in flight (sent ${intent.sentAt}), so whether it had its effect is unknown`,
      outcome: 'unknown',
    };
    const target = intent.item === null ? step.record : step.items?.find((item) => item.index === intent.item);
    if (!target || target.status === 'succeeded') continue;
    target.status = 'failed';
    target.error = error;
    target.attempts = Math.max(target.attempts, intent.attempt);
    target.history = [...(target.history ?? []), { attempt: intent.attempt, startedAt: intent.sentAt, endedAt: now, error }];
    if (intent.item === null) {
      step.record.endedAt ??= now;
      steps.push({ position, record: step.record });
    } else items.push({ stepId: intent.stepId, record: target as ItemRecord });
  }
  store.write({ runId: stored.run.id, steps, items, settled: open.map((intent) => ({ id: intent.id, outcome: 'failed', endedAt: now })) });
}
