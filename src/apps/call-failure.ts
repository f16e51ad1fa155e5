import type { FailureKind } from '../config/types.js';

// The error a failed call throws, apart from how errors are classified (call-error.ts): what only
// reads a workflow (validate, plan) names failures with it without loading the MCP SDK.

/**
 * Whether a failed request reached the app. `not-sent`: provably never left
 * the runner (safe to retry anything); `unknown`: it was sent and no answer
 * came back, so a side effect may or may not have happened.
 */
export type CallOutcome = 'not-sent' | 'unknown' | 'answered';

export interface CallErrorOptions {
  outcome?: CallOutcome;
  cause?: unknown;
  /** JSON-RPC error code, for `protocol`. */
  rpcCode?: number;
  /** The app's answer was refused by one of runner's limits (size, depth, files, time to check it): the same call would meet it again, so it is not retried. */
  refusedByLimit?: boolean;
}

/** A failed tool call, classified where it failed (docs/apps.md, Failures). */
export class CallError extends Error {
  readonly kind: FailureKind;
  readonly outcome: CallOutcome;
  readonly rpcCode?: number;
  readonly refusedByLimit: boolean;

  constructor(kind: FailureKind, message: string, options: CallErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CallError';
    this.kind = kind;
    this.outcome = options.outcome ?? (kind === 'tool' || kind === 'protocol' ? 'answered' : 'not-sent');
    this.rpcCode = options.rpcCode;
    this.refusedByLimit = options.refusedByLimit ?? false;
  }
}
