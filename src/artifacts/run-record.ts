import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FailureKind, PolicyAction } from '../config/types.js';
import type { AppInfo } from '../apps/connection.js';
import { writeJsonAtomic } from './json-file.js';
import { storageError } from './storage-error.js';

/**
 * `queued`: waiting for a limit, its app or a prompt's answer; `running`: its call was sent;
 * `waiting`: an `ask` nobody could answer on a terminal waits for `runner approve` or `runner deny` (nothing was sent).
 */
export type StepStatus = 'pending' | 'queued' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'skipped' | 'denied' | 'cancelled';
/** `waiting`: nothing is left to do but steps waiting for an approval; `resume` (or serve) continues it once answered. */
export type RunStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled';

/** How an approval was answered: by a person (`runner approve`, `runner deny`, the UI), or by its expiry. */
export type ApprovalDecision = 'approved' | 'denied' | 'expired';

/** The approval a waiting step asked for (`policy.headless-ask: wait`), and its answer once there is one. */
export interface ApprovalRecord {
  requestedAt: string;
  /** When an unanswered approval counts as denied (`requestedAt` + `policy.approval-timeout`). */
  expiresAt: string;
  /** Absent while nobody answered. */
  decision?: ApprovalDecision;
  /** Who answered: the user name (`RUNNER_USER`, else the OS account); for an expiry, the process that noticed it. */
  by?: string;
  /** When it was answered (for an expiry, when it was noticed: at or after `expiresAt`). */
  at?: string;
  /** Where it was answered. */
  via?: 'cli' | 'ui' | 'timeout';
}

export interface StepErrorRecord {
  kind: FailureKind;
  message: string;
  /** `unknown` when a request that may have had a side effect got no answer. */
  outcome?: 'unknown' | 'not-sent';
}

/** One try of one call. */
export interface AttemptRecord {
  attempt: number;
  startedAt: string;
  endedAt: string;
  error: StepErrorRecord | null;
}

/**
 * The most characters of one message from an app the run record keeps (an
 * error's, a question's), and runner passes on (a progress message, to the
 * terminal, the UI and through the queue). An app's words reach the record
 * through many errors (a JSON-RPC error's message may be as large as the
 * app's max-result), and each attempt keeps its own: 20 attempts at a 2 MB
 * message made a 42 MB run.json and an 82 MB report.html.
 */
export const MAX_RECORDED_MESSAGE_CHARS = 16_000;

/**
 * The most entries one list of a call's record keeps (its `history` of
 * attempts, the tool's `elicitations`): the first half of them and the
 * latest half. `retry: { attempts: 100000, delay: 1ms }` is allowed, an app
 * may ask questions for as long as the step's timeout lets it, and each entry
 * may carry the app's words: the record, the store and report.html would
 * grow with every one. In a history the `attempt` numbers show the gap, and
 * `attempts` still counts every attempt.
 */
export const MAX_RECORDED_ENTRIES = 100;

/** Appends `entry` to `list`; past MAX_RECORDED_ENTRIES the oldest of the latest half makes room. */
export function addKeepingEnds<T>(list: T[], entry: T): void {
  if (list.length >= MAX_RECORDED_ENTRIES) list.splice(MAX_RECORDED_ENTRIES / 2, list.length - MAX_RECORDED_ENTRIES + 1);
  list.push(entry);
}

/** A question a tool asked mid-call, and how it was answered. */
export interface ElicitationRecord {
  message: string;
  action: 'accept' | 'decline' | 'cancel';
  /** Which fields were answered, and from where: the step's `elicit:` map or the terminal. */
  answered: string[];
  source: 'workflow' | 'terminal' | 'none';
}

/** One call of a foreach step. */
export interface ItemRecord {
  index: number;
  status: StepStatus;
  attempts: number;
  args: unknown;
  outputs: unknown;
  text: string;
  files: string[];
  error: StepErrorRecord | null;
  history: AttemptRecord[];
  elicitations?: ElicitationRecord[];
}

export interface StepRecord {
  id: string;
  uses: string;
  status: StepStatus;
  attempts: number;
  startedAt: string | null;
  endedAt: string | null;
  args: unknown;
  outputs: unknown;
  text: string | string[];
  files: string[];
  policy: PolicyAction | null;
  /** What decided `policy`: `rule <glob>`, the annotation classes (`destructive`, `other, open-world`), `built-in`, or a prompt's answer. Absent in records before it was kept. */
  policyReason?: string;
  error: StepErrorRecord | null;
  /** Every attempt with its own start, end and error. */
  history: AttemptRecord[];
  /** Questions the tool asked mid-call (form elicitation). */
  elicitations?: ElicitationRecord[];
  /** foreach steps: one record per item. */
  items?: ItemRecord[];
  /** With `headless-ask: wait`: the approval this step asked for (one for the step, covering all its foreach items). */
  approval?: ApprovalRecord;
  /** The steps this one waited for: its `needs` and the steps its expressions read. Absent in records before it was kept. */
  needs?: string[];
  /** Of `needs`, those written under the step's `needs:` (the rest are read in expressions). */
  declaredNeeds?: string[];
}

/** The run record (docs/apps.md, The run record), written to run.json. */
export interface RunRecord {
  id: string;
  workflow: string;
  /** The workflow file this run came from (what `runner resume` loads again). */
  workflowFile?: string;
  status: RunStatus;
  trigger: Record<string, unknown> & { type: 'manual' | 'watch' | 'schedule' };
  inputs: Record<string, unknown>;
  startedAt: string;
  endedAt: string | null;
  dir: string;
  apps: Record<string, { protocolVersion: string | undefined; server: AppInfo['server'] }>;
  steps: StepRecord[];
  error?: { message: string } | null;
  /** When `runner resume` continued this run. */
  resumedAt?: string[];
  /** Each resume: when, and which steps ran (again) in it. */
  resumes?: { at: string; steps: string[] }[];
  /** Time the run was executing, over all its executions (the gaps before resumes left out). */
  durationMs?: number;
}

/** Kept here for the callers that write a step's files (save-result.ts). */
export { writeJsonAtomic } from './json-file.js';
export { writeFileAtomic } from './atomic-file.js';

/** Creates a run's folder; a `storage` RunnerError (nothing has run) when it cannot. */
export function makeRunFolder(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw storageError(error, dir);
  }
}

/**
 * Keeps run.json current: always valid JSON (temp + rename), rewritten at most
 * every `intervalMs` while the run changes, and at once by `flush()`.
 */
export class RunRecordWriter {
  readonly file: string;
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;

  constructor(
    private readonly record: RunRecord,
    private readonly transform: (record: RunRecord) => unknown = (record) => record,
    /** Called when a write fails; without it the error is thrown. */
    private readonly onFailure?: (error: unknown) => void,
    // Each write serializes the whole record: often enough to stay "current
    // within a second", rarely enough not to cost a long run much.
    private readonly intervalMs = 800,
  ) {
    this.file = join(record.dir, 'run.json');
  }

  /** Notes a change; the file follows within `intervalMs`. */
  changed(): void {
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.dirty) this.flush();
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Writes now. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.dirty = false;
    try {
      writeJsonAtomic(this.file, this.transform(this.record));
    } catch (error) {
      if (!this.onFailure) throw error;
      this.onFailure(error);
    }
  }
}
