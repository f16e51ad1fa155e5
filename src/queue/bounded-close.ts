/** Whether `promise` settles within `ms`. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * `promise`'s value; once `signal` aborts, it waits at most `graceMs` more for it, and then resolves
 * undefined. A rejection is passed on.
 */
export function settledUnlessStopped<T>(promise: Promise<T>, signal: AbortSignal, graceMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const givenUp = new Promise<undefined>((resolve) => {
    onAbort = () => (timer = setTimeout(() => resolve(undefined), graceMs));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, givenUp]).finally(() => {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort!);
  });
}

/** What closeWithin needs of a BullMQ Queue or QueueEvents: its close, and its raw Redis clients. */
interface Closable {
  close(): Promise<void>;
  getBackend(): { readonly client: Promise<{ disconnect(): void }>; readonly blockingClient?: Promise<{ disconnect(): void }> | undefined };
}

/**
 * Closes BullMQ queues and event listeners. Their close sends QUIT, which waits
 * for a Redis that is away to come back, possibly forever: after `graceMs` their
 * connections are dropped instead (no reconnecting; whatever waits for Redis
 * is left). Resolves with whether they closed by themselves.
 */
export async function closeWithin(closables: Closable[], graceMs: number): Promise<boolean> {
  const closing = Promise.allSettled(closables.map((closable) => closable.close()));
  if (await settlesWithin(closing, graceMs)) return true;
  await Promise.allSettled(
    closables.map(async (closable) => {
      const backend = closable.getBackend();
      for (const client of await Promise.all([backend.client, backend.blockingClient])) client?.disconnect();
    }),
  );
  return false;
}
