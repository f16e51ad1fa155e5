import type { ElicitationRecord } from '../artifacts/run-record.js';
import type { RetryPolicy } from '../config/types.js';
import type { RecoveredCall } from '../store/take-over.js';
import type { CallProgress } from './progress-throttle.js';

/**
 * One call as the coordinator hands it to whoever executes it (this process,
 * or a `runner worker` through the queue): everything already decided, as
 * plain JSON. The worker takes limits, reaches the app, calls with the
 * timeouts below, retries as far as `retry` and `retrySafe` allow, and saves
 * the result into `callDir`.
 */
export interface CallJob {
  runId: string;
  workflow: string;
  stepId: string;
  /** The foreach item's index; absent for a plain step. */
  item?: number;
  /** `app.tool`, for messages. */
  uses: string;
  app: string;
  tool: string;
  /** Evaluated, coerced and checked against the tool's inputSchema; the policy allowed them. */
  args: Record<string, unknown>;
  /** The step's (or item's) folder, on the shared artifacts folder. */
  callDir: string;
  /** The coordinator's verdict: a sent request may be repeated (read-only, idempotent, or `retry.unsafe`). */
  retrySafe: boolean;
  /** Neither read-only nor idempotent: its intent is journaled before the request is sent. */
  sideEffects: boolean;
  retry: RetryPolicy;
  /** The step's timeout: each attempt's budget, and the figure in messages. */
  timeoutMs: number;
  /** What the first attempt may still spend (the step's timeout less the time it took to reach the app). */
  firstBudgetMs: number;
  idleTimeoutMs?: number;
}

/** What executing a CallJob gave, as plain JSON: the fields of the call's record it fills in (what a resume recovers, and the questions asked). */
export interface CallOutcome extends RecoveredCall {
  elicitations?: ElicitationRecord[];
}

/**
 * A job's progress field. `sent`: a request with side effects went out (in
 * that attempt), so a second run of the job must not send it again. `call`:
 * the app's latest progress notification, numbered, for the coordinator's view.
 */
export interface JobProgressMark {
  sent?: number;
  call?: CallProgress & { seq: number };
}
