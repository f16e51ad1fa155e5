// Apart from call-error.ts, which loads the MCP SDK: a command sets an abort reason before the SDK is loaded.

/** Why a call's signal was aborted, set by whoever aborts it. */
export class CallAbortReason extends Error {
  constructor(
    readonly kind: 'timeout' | 'cancelled' | 'storage',
    message: string,
  ) {
    super(message);
    this.name = 'CallAbortReason';
  }
}
