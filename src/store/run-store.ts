import type { ItemRecord, RunRecord, RunStatus, StepRecord } from '../artifacts/run-record.js';
import type { ApprovalAnswer, ApprovalResult } from './approval-answer.js';

/**
 * The run store: runs, steps, foreach items, attempts (in each record's
 * history) and the call journal. It is the source of truth; run.json is a
 * copy written from the same data for people and other tools.
 *
 * Records come in and go out in "store form": secret values already replaced
 * by references (see secret-refs.ts), never the values themselves.
 *
 * One implementation today (SQLite under `<artifacts>/.runner/`); queue mode
 * adds one shared through Redis, so nothing outside `store/` knows about SQL.
 */
export interface RunStore {
  /** Records a new run, owned by `owner`. Throws when the id exists. */
  createRun(run: StoredRun, owner: RunOwner): void;
  /**
   * Writes what changed since the last call, in one transaction. `durable`
   * forces it to the disk before returning (an intent must survive power loss).
   */
  write(changes: RunChanges, options?: { durable?: boolean }): void;
  /** The whole run in store form, or undefined. */
  getRun(id: string): StoredRun | undefined;
  /** Run ids equal to `id` or starting with it, newest first (at most `limit`). */
  matchRunIds(id: string, limit: number): string[];
  /** Runs newest first, without their steps. */
  listRuns(filter?: RunFilter): RunSummary[];
  /** Journal entries of `runId` whose call was sent and has no recorded outcome. */
  openIntents(runId: string): JournalEntry[];
  /**
   * Makes `owner` the run's owner unless a live process holds it; returns the
   * holder when one does. Atomic across processes.
   */
  claimRun(id: string, owner: RunOwner, isLive: (holder: RunOwner) => boolean): { claimed: true } | { claimed: false; holder: RunOwner };
  /** Gives the run up (its process is done with it). */
  releaseRun(id: string, owner: RunOwner): void;
  /** Notes that `owner` is alive (for owners on other hosts, who cannot be asked). */
  heartbeat(ids: string[], owner: RunOwner, nowMs: number): void;
  /** Runs whose status is running, with their owner: what a restart looks for. */
  unfinishedRuns(workflows?: string[]): (RunSummary & { owner: RunOwner | null })[];
  /**
   * Records the answer to a waiting step's approval, only if the run is
   * `waiting`, the step is `waiting` and nobody answered it yet: a compare and
   * set, atomic across processes (two approvers, or an answer and the expiry:
   * exactly one wins, the other learns what was recorded).
   */
  answerApproval(runId: string, stepId: string, answer: ApprovalAnswer): ApprovalResult;
  /** The newest run of `workflow` whose trigger has this content hash (`sha256:<hex>`). */
  findRunByTriggerHash(workflow: string, hash: string): RunSummary | undefined;
  /** Every workflow that has runs. */
  workflowNames(): string[];
  /** Deletes runs (rows only; the caller removes folders). */
  deleteRuns(ids: string[]): void;
  close(): void;
}

/** A run as the store holds it. */
export interface StoredRun {
  /** The run-level fields of the record (without `steps`). */
  run: Omit<RunRecord, 'steps'>;
  steps: StoredStep[];
  /** Read from a run.json written before the store existed (its workflow path is not trusted). */
  imported?: boolean;
}

/** A step record without its items, plus the items. */
export interface StoredStep {
  record: Omit<StepRecord, 'items'>;
  items?: ItemRecord[];
}

/** What one write carries: any of the run fields, whole steps and items, journal entries. */
export interface RunChanges {
  runId: string;
  run?: Omit<RunRecord, 'steps'>;
  steps?: { position: number; record: Omit<StepRecord, 'items'>; itemCount?: number }[];
  items?: { stepId: string; record: ItemRecord }[];
  /** Intents to record (a call that is about to be sent). */
  intents?: JournalEntry[];
  /** Intents whose outcome is now known. */
  settled?: { id: string; outcome: JournalOutcome; endedAt: string }[];
}

export type JournalOutcome = 'succeeded' | 'failed';

/** One side-effecting call that was (about to be) sent. */
export interface JournalEntry {
  /** Unique: `<run>/<step>/<item or ->/<session>/<attempt>`. */
  id: string;
  runId: string;
  stepId: string;
  /** foreach item index, or null. */
  item: number | null;
  attempt: number;
  /** The tool, `app.tool`. */
  uses: string;
  sentAt: string;
}

/** Who is executing a run: the process, and where. */
export interface RunOwner {
  host: string;
  pid: number;
  /** The process's start time as the OS reports it (tells a reused pid apart); null where unknown. */
  started: string | null;
  /** Last sign of life, ms since the epoch. */
  heartbeatMs: number;
}

export interface RunFilter {
  workflow?: string;
  status?: RunStatus;
  /** Only runs that started at or after this time (ms since the epoch). */
  sinceMs?: number;
  /** Only runs that started before this time. */
  beforeMs?: number;
  limit?: number;
  /** Skip this many (for `--keep N`). */
  offset?: number;
}

/** A run without its steps: what `runner runs` lists. */
export interface RunSummary {
  id: string;
  workflow: string;
  status: RunStatus;
  trigger: RunRecord['trigger'];
  startedAt: string;
  endedAt: string | null;
  /** Time it was executing, resumes' gaps left out (absent while it runs). */
  durationMs?: number;
  dir: string;
}
