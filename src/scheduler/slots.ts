/**
 * A counting semaphore: a task starts at once while a slot is free, else it
 * waits its turn (first come, first served) and is handed the slot of a task
 * that ended. For the process-wide and each workflow's `concurrency`, which
 * have no rate and no events to emit: p-queue costs every call a few promises
 * and events there.
 */
export class Slots {
  private active = 0;
  /** Waiting tasks from `head` on: taken by index, not by shift(), so a long line costs O(1) per task. */
  private waiting: (() => void)[] = [];
  private head = 0;

  constructor(readonly limit: number) {}

  /** Runs `task` holding one slot; resolves or rejects as it does. */
  run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) {
      this.active++;
      return this.execute(task);
    }
    return new Promise<T>((resolve, reject) => this.waiting.push(() => void this.execute(task).then(resolve, reject)));
  }

  private async execute<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await task();
    } finally {
      // The slot goes straight to the next in line, so no newcomer can take it in between.
      const next = this.head < this.waiting.length ? this.waiting[this.head++] : undefined;
      if (this.head === this.waiting.length) {
        this.waiting = [];
        this.head = 0;
      } else if (this.head > 1024 && this.head * 2 > this.waiting.length) {
        this.waiting = this.waiting.slice(this.head);
        this.head = 0;
      }
      if (next) next();
      else this.active--;
    }
  }
}
