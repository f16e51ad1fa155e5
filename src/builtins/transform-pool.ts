import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { TransformRequest, TransformResponse } from './transform-worker.js';

/** Heap of one transform thread: an expression that builds more fails instead of growing the runner. */
const MAX_HEAP_MB = 512;

/** Why a transform failed: the expression's own error (with its position) or a limit. */
export class TransformError extends Error {
  constructor(
    message: string,
    readonly position?: number,
    readonly limit?: 'timeout' | 'memory',
  ) {
    super(message);
    this.name = 'TransformError';
  }
}

interface Job {
  request: TransformRequest;
  resolve: (json: string) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal;
}

/**
 * A few worker threads that evaluate JSONata. Each thread runs one expression
 * at a time; a call that is aborted (the step's timeout, Ctrl-C) or that runs
 * out of heap ends its thread, and a new one is started for the next call.
 * Idle threads do not keep the process alive.
 */
export class TransformPool {
  private readonly idle: Worker[] = [];
  private readonly waiting: Job[] = [];
  private started = 0;
  private nextId = 1;
  private readonly size = Math.max(1, Math.min(4, availableParallelism()));

  /** Evaluates `expression` against `input`; resolves with the result's JSON text. */
  evaluate(expression: string, input: unknown, options: { signal: AbortSignal; maxResultBytes: number }): Promise<string> {
    return new Promise((resolve, reject) => {
      if (options.signal.aborted) return reject(options.signal.reason);
      const job: Job = { request: { id: this.nextId++, expression, input, maxResultBytes: options.maxResultBytes }, resolve, reject, signal: options.signal };
      this.waiting.push(job);
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const worker = this.idle.pop() ?? (this.started < this.size ? this.startWorker() : undefined);
      if (!worker) return;
      this.runOn(worker, this.waiting.shift()!);
    }
  }

  private startWorker(): Worker {
    this.started++;
    return new Worker(new URL('./transform-worker.js', import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: MAX_HEAP_MB } });
  }

  private runOn(worker: Worker, job: Job): void {
    if (job.signal.aborted) {
      this.release(worker);
      return job.reject(job.signal.reason);
    }
    worker.ref();
    let settled = false;
    const finish = (keep: boolean, outcome: () => void) => {
      if (settled) return;
      settled = true;
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      job.signal.removeEventListener('abort', onAbort);
      if (keep) this.release(worker);
      else this.discard(worker);
      outcome();
    };
    const onMessage = (response: TransformResponse) => {
      if (response.id !== job.request.id) return;
      finish(true, () => (response.ok ? job.resolve(response.json) : job.reject(new TransformError(response.message, response.position))));
    };
    const onError = (error: Error) => {
      const memory = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      finish(false, () =>
        job.reject(memory ? new TransformError(`the expression used more than ${MAX_HEAP_MB} MB of memory`, undefined, 'memory') : new TransformError(error.message)),
      );
    };
    const onExit = () => finish(false, () => job.reject(new TransformError('the transform thread ended unexpectedly')));
    const onAbort = () => finish(false, () => job.reject(job.signal.reason));
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    job.signal.addEventListener('abort', onAbort, { once: true });
    worker.postMessage(job.request);
  }

  private release(worker: Worker): void {
    worker.unref();
    this.idle.push(worker);
    this.dispatch();
  }

  private discard(worker: Worker): void {
    this.started--;
    void worker.terminate();
    this.dispatch();
  }
}
