import type { RunRecord, StepRecord } from '../artifacts/run-record.js';
import { mapItemValues, mapRunValues, mapStepValues } from '../artifacts/record-values.js';
import { isoTime, type Clock } from '../clock.js';
import type { SecretEntry } from '../config/types.js';
import { HEARTBEAT_EVERY_MS } from './run-owner.js';
import type { JournalEntry, JournalOutcome, RunChanges, RunOwner, RunStore } from './run-store.js';
import { toStoreForm } from './secret-refs.js';

/** Changes of safe calls reach the store within this time (they may be lost in a crash, and are run again). */
const LAZY_FLUSH_MS = 100;

/** A side-effecting call's entry in the journal, returned by `intent`. */
export type IntentToken = string;

/**
 * Keeps a run's record in the store while it executes. Steps and items are
 * written when they change, batched every 100 ms; a call that is neither
 * read-only nor idempotent is different: its intent is written and synced to
 * disk before it is sent (`intent`), and its outcome is written as soon as it
 * is known (`settle`), each together with every change before it. So after a
 * crash at any moment, a side-effecting call with an intent and no outcome is
 * one whose outcome is unknown, and everything it depended on is recorded.
 */
export class RunRecorder {
  private readonly dirtySteps = new Set<string>();
  private readonly dirtyItems = new Map<string, Set<number>>();
  private runDirty = false;
  private timer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private lastHeartbeatMs: number;
  private readonly positions: Map<string, number>;
  private readonly steps: Map<string, StepRecord>;
  /** Item counts already in the store, so a foreach step that now has fewer items drops the rest. */
  private readonly storedItemCounts = new Map<string, number>();
  private readonly session: number;
  private failure: unknown;
  private readonly pendingItemCounts = new Map<string, number>();

  constructor(
    private readonly store: RunStore,
    private readonly record: RunRecord,
    private readonly options: {
      owner: RunOwner;
      secrets: readonly SecretEntry[];
      clock: Clock;
      /** Which resume this is (0: the first execution); part of journal ids. */
      session: number;
      /** Called when a write fails (disk full, read-only): the run cannot go on safely. */
      onFailure: (error: unknown) => void;
    },
  ) {
    this.positions = new Map(record.steps.map((step, index) => [step.id, index]));
    this.steps = new Map(record.steps.map((step) => [step.id, step]));
    this.lastHeartbeatMs = options.clock.now();
    this.session = options.session;
    for (const step of record.steps) if (step.items) this.storedItemCounts.set(step.id, step.items.length);
  }

  /** One value in store form (see secret-refs.ts). */
  private readonly storeForm = (text: string) => toStoreForm(text, this.options.secrets);

  /** Records a new run (first execution). */
  create(): void {
    const { run, steps } = this.snapshot();
    this.store.createRun({ run, steps }, this.options.owner);
    this.startHeartbeat();
  }

  /**
   * A process on another host can only tell this one is alive by its
   * heartbeat, also while a long call writes nothing: beat on a timer.
   */
  private startHeartbeat(): void {
    this.heartbeatTimer = setInterval(() => {
      const now = this.options.clock.now();
      try {
        this.store.heartbeat([this.record.id], this.options.owner, now);
        this.lastHeartbeatMs = now;
      } catch (error) {
        this.fail(error);
      }
    }, HEARTBEAT_EVERY_MS);
    this.heartbeatTimer.unref();
  }

  /** Writes the whole record over what the store has (a resume, after its reconciliation). */
  rewrite(): void {
    this.startHeartbeat();
    this.runDirty = true;
    for (const step of this.record.steps) {
      this.dirtySteps.add(step.id);
      if (step.items) this.dirtyItems.set(step.id, new Set(step.items.map((item) => item.index)));
    }
    this.flush();
  }

  /** Notes that the run's own fields changed. */
  runChanged(): void {
    this.runDirty = true;
    this.schedule();
  }

  /** Notes that a step (or one of its foreach items) changed. */
  stepChanged(stepId: string, item?: number): void {
    if (item === undefined) this.dirtySteps.add(stepId);
    else {
      let items = this.dirtyItems.get(stepId);
      if (!items) this.dirtyItems.set(stepId, (items = new Set()));
      items.add(item);
    }
    this.schedule();
  }

  /**
   * Records, durably, that a side-effecting call is about to be sent; throws
   * when it cannot (then the call must not be sent).
   */
  intent(call: { stepId: string; item?: number; attempt: number; uses: string }): IntentToken {
    const entry: JournalEntry = {
      id: `${this.record.id}/${call.stepId}/${call.item ?? '-'}/${this.session}/${call.attempt}`,
      runId: this.record.id,
      stepId: call.stepId,
      item: call.item ?? null,
      attempt: call.attempt,
      uses: call.uses,
      sentAt: isoTime(this.options.clock.now()),
    };
    this.write({ intents: [entry] }, true);
    return entry.id;
  }

  /** Records the outcome of a call recorded by `intent`, with every change before it, now. */
  settle(token: IntentToken, outcome: JournalOutcome): void {
    try {
      this.write({ settled: [{ id: token, outcome, endedAt: isoTime(this.options.clock.now()) }] }, false);
    } catch (error) {
      this.fail(error);
    }
  }

  /** Writes every pending change now. Never throws: a failure goes to `onFailure`. */
  flush(): void {
    try {
      this.write({}, false);
    } catch (error) {
      this.fail(error);
    }
  }

  /** Final write; stops the timer. */
  close(): void {
    this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    clearInterval(this.heartbeatTimer);
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, LAZY_FLUSH_MS);
    this.timer.unref();
  }

  private write(extra: Pick<RunChanges, 'intents' | 'settled'>, durable: boolean): void {
    const changes = this.collect();
    this.store.write({ ...changes, ...extra }, { durable });
    this.commitCollected();
    const now = this.options.clock.now();
    if (now - this.lastHeartbeatMs >= HEARTBEAT_EVERY_MS) {
      this.lastHeartbeatMs = now;
      this.store.heartbeat([this.record.id], this.options.owner, now);
    }
  }

  /** The pending changes in store form; cleared only once the write succeeded. */
  private collect(): RunChanges {
    const changes: RunChanges = { runId: this.record.id };
    const mask = this.storeForm;
    if (this.runDirty) changes.run = mapRunValues(withoutSteps(this.record), mask);
    this.pendingItemCounts.clear();
    if (this.dirtySteps.size > 0) {
      changes.steps = [...this.dirtySteps].map((id) => {
        const step = this.steps.get(id)!;
        const { items, ...rest } = step;
        const count = items?.length ?? 0;
        const trim = (this.storedItemCounts.get(id) ?? 0) > count;
        if (trim || items) this.pendingItemCounts.set(id, count);
        return { position: this.positions.get(id)!, record: mapStepValues(rest, mask), ...(trim && { itemCount: count }) };
      });
    }
    if (this.dirtyItems.size > 0) {
      changes.items = [];
      for (const [stepId, indexes] of this.dirtyItems) {
        const items = this.steps.get(stepId)?.items;
        for (const index of indexes) {
          const item = items?.[index];
          if (item) changes.items.push({ stepId, record: mapItemValues(item, mask) });
        }
      }
    }
    return changes;
  }

  private commitCollected(): void {
    this.runDirty = false;
    this.dirtySteps.clear();
    this.dirtyItems.clear();
    for (const [id, count] of this.pendingItemCounts) this.storedItemCounts.set(id, count);
  }

  private snapshot() {
    const mask = this.storeForm;
    return {
      run: mapRunValues(withoutSteps(this.record), mask),
      steps: this.record.steps.map((step) => {
        const { items, ...rest } = step;
        return items ? { record: mapStepValues(rest, mask), items: items.map((item) => mapItemValues(item, mask)) } : { record: mapStepValues(rest, mask) };
      }),
    };
  }

  private fail(error: unknown): void {
    if (this.failure) return;
    this.failure = error;
    this.options.onFailure(error);
  }
}

function withoutSteps(record: RunRecord): Omit<RunRecord, 'steps'> {
  const { steps: _steps, ...run } = record;
  return run;
}

