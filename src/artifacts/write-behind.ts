/**
 * Writes that may land a moment later: a step's result.json is for the record,
 * not for the next step, so it is written after the next request has gone
 * out (one event-loop turn later) instead of in front of it. Every write is
 * still synchronous and atomic; `flush()` runs whatever is pending, and the
 * executor flushes before it writes the final run.json.
 */
export class WriteBehind {
  private pending: (() => void)[] = [];
  private scheduled: NodeJS.Immediate | undefined;

  /** `onError` gets a write that failed (a full disk); without it, `flush` throws it. */
  constructor(private readonly onError?: (error: unknown) => void) {}

  /** Queues a write for the next turn of the event loop. */
  add(write: () => void): void {
    this.pending.push(write);
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /** Runs every pending write now, in order. */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    const writes = this.pending;
    this.pending = [];
    for (const write of writes) {
      try {
        write();
      } catch (error) {
        if (!this.onError) throw error;
        this.onError(error);
      }
    }
  }
}
