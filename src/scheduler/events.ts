import type { RunRecord, StepErrorRecord, StepStatus } from '../artifacts/run-record.js';
import type { PolicyAction } from '../config/types.js';

/** What happens during a run, for progress output. Emitted in order. */
export type RunEvent =
  | { type: 'run-started'; run: RunRecord }
  | { type: 'step'; run: RunRecord; stepId: string; status: StepStatus; item?: number; attempt?: number; error?: StepErrorRecord | null; reason?: string }
  | { type: 'retry'; run: RunRecord; stepId: string; item?: number; attempt: number; delayMs: number; error: StepErrorRecord }
  /** A progress notification from the app for a call in flight. */
  | { type: 'progress'; run: RunRecord; stepId: string; item?: number; progress: number; total?: number; message?: string }
  | { type: 'run-finished'; run: RunRecord };

/** A question to the user before an `ask` call. Resolves true to allow. */
export interface ApprovalRequest {
  app: string;
  tool: string;
  stepId: string;
  item?: number;
  args: unknown;
  hints: { readOnly: boolean; destructive: boolean; idempotent: boolean; openWorld: boolean };
  reason: string;
  signal: AbortSignal;
}

export type Approver = (request: ApprovalRequest) => Promise<boolean>;

/** A tool's mid-call question, for the terminal. */
export interface FieldsRequest {
  app: string;
  tool: string;
  stepId: string;
  item?: number;
  message: string;
  /** Only the fields the workflow did not answer already. */
  fields: { name: string; type: string; description?: string; required: boolean; enum?: unknown[] }[];
  signal: AbortSignal;
}

/** Asks the user for field values; `decline` when they will not answer. */
export type FieldsPrompter = (request: FieldsRequest) => Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }>;

export interface PolicyOverrides {
  /** Answers elicitation on a TTY; absent → unanswered questions are declined. */
  prompter?: FieldsPrompter;
  /** --yes: every ask is allowed. */
  yes: boolean;
  /** --allow GLOB...: asks matching a glob are allowed. */
  allow: string[];
  /** Asks the user on a TTY; absent → ask means deny. */
  approver?: Approver;
  /** Who answers `approver`'s questions (recorded on a waiting step's approval). */
  user?: string;
}

export type { PolicyAction };

/** A step or retry event before the run record is attached. */
export type CallEvent = Extract<RunEvent, { type: 'step' | 'retry' | 'progress' }> extends infer E ? (E extends RunEvent ? Omit<E, 'run'> : never) : never;
