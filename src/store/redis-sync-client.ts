import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { RunnerError } from '../errors.js';

/** One Redis command: its name (or a script defined with `scripts`) and arguments. */
export type RedisCommand = [name: string, ...args: (string | number)[]];

/** A Lua script the client defines on its connection (ioredis `defineCommand`). */
export interface RedisScript {
  name: string;
  lua: string;
  numberOfKeys: number;
}

/** What one round trip does: commands in a MULTI/EXEC, or pipelined, or one MULTI guarded by WATCH. */
export type RedisBatch =
  | { kind: 'multi' | 'pipeline'; commands: RedisCommand[] }
  /** Runs `commands` in MULTI/EXEC only while `absentKey` does not exist; `{ exists: true }` when it does. */
  | { kind: 'multi-if-absent'; absentKey: string; commands: RedisCommand[] };

export interface RedisSyncClientOptions {
  /** How long one round trip may take before the caller gets a `storage` error. @default 30000 */
  timeoutMs?: number;
  scripts?: RedisScript[];
}

/** The reply of one command: its value, or the error Redis gave for it. */
export type RedisReply = { value: unknown; error?: undefined } | { value?: undefined; error: string };

/**
 * The worker thread's code: one thread per process, holding one ioredis
 * connection per client. A client opens its connection with a message on the
 * thread's port that carries a MessagePort of its own; the thread answers one
 * batch at a time on it, and the client sleeps on a shared word of its own
 * until the answer is posted. Plain JS in a string so it runs the same from
 * src/ (vitest) and dist/.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Redis = require(workerData.ioredisPath);
const replies = (results) => results.map(([error, value]) => (error ? { error: error.message } : { value }));
parentPort.on('message', ({ port, state, url, scripts, maxRetriesPerRequest }) => {
  let redis;
  let openError; // answers every batch of this client, and of this client only
  try {
    redis = new Redis(url, { maxRetriesPerRequest, connectTimeout: 10000, retryStrategy: (times) => Math.min(times * 200, 1000) });
    redis.on('error', () => {}); // each command reports its own failure
    // state[1]: whether the connection is up, for a client whose last command found Redis away (failFast).
    redis.on('ready', () => Atomics.store(state, 1, 1));
    redis.on('close', () => Atomics.store(state, 1, 0));
    for (const script of scripts) redis.defineCommand(script.name, { lua: script.lua, numberOfKeys: script.numberOfKeys });
  } catch (error) {
    openError = error;
  }
  async function run(batch) {
    if (openError) throw openError;
    if (batch.kind === 'quit') return redis.quit();
    if (batch.kind === 'pipeline') return replies(await redis.pipeline(batch.commands).exec());
    if (batch.kind === 'multi') return replies(await redis.multi(batch.commands).exec());
    for (;;) {
      await redis.watch(batch.absentKey);
      if ((await redis.exists(batch.absentKey)) === 1) {
        await redis.unwatch();
        return { exists: true };
      }
      const results = await redis.multi(batch.commands).exec();
      if (results) return replies(results); // null: the key appeared meanwhile; look again
    }
  }
  port.on('message', async ({ id, batch }) => {
    let answer;
    try {
      answer = { id, result: await run(batch) };
    } catch (error) {
      answer = { id, error: error && error.message ? error.message : String(error) };
    }
    port.postMessage(answer);
    Atomics.add(state, 0, 1);
    Atomics.notify(state, 0);
    if (batch.kind === 'quit') port.close();
  });
});
`;

/** ioredis's errors for a command that gave up waiting for the connection. */
const CONNECTION_GAVE_UP = /max retries per request|Connection is closed|ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH/i;

/** The first error among a batch's replies that says the connection gave up, if any. */
function connectionFailureIn(result: unknown): string | undefined {
  if (!Array.isArray(result)) return undefined;
  return (result as RedisReply[]).find((reply) => reply.error !== undefined && CONNECTION_GAVE_UP.test(reply.error))?.error;
}

/** The process's Redis thread, and why it stopped if it did. */
interface RedisThread {
  worker: Worker;
  failure: Error | undefined;
}

let thread: RedisThread | undefined;

/**
 * The thread every client of this process shares, started on first use (a
 * thread costs 100-200 ms of CPU to start: a V8 isolate, then ioredis's
 * modules). It stays for later clients; it never keeps the process alive. One
 * that failed is replaced for the clients opened after it.
 */
function redisThread(): RedisThread {
  if (thread && !thread.failure) return thread;
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ioredisPath: createRequire(import.meta.url).resolve('ioredis') } });
  const started: RedisThread = { worker, failure: undefined };
  worker.on('error', (error) => (started.failure = error));
  worker.on('exit', (code) => (started.failure ??= new Error(`the Redis worker thread exited (${code})`)));
  worker.unref();
  thread = started;
  return started;
}

/**
 * A Redis connection with a synchronous API, for the synchronous RunStore
 * interface: ioredis runs in a worker thread and the caller blocks (Atomics.wait)
 * until the thread posts the reply, like better-sqlite3 blocks on the disk.
 */
export class RedisSyncClient {
  private readonly thread: RedisThread;
  private readonly port: MessagePort;
  /** [0]: bumped by the thread after each reply it posts; [1]: 1 while the thread's connection is up. */
  private readonly state = new Int32Array(new SharedArrayBuffer(8));
  /** Why the last command failed, when it failed for want of Redis: until the connection is up again, commands fail at once. */
  private unreachable: string | undefined;
  private readonly timeoutMs: number;
  private nextId = 0;
  private closed = false;

  constructor(readonly url: string, options: RedisSyncClientOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    // A command waits through this many reconnects (200 ms, 400 ms, … then 1 s apart), so the thread gives up before the caller does.
    const maxRetriesPerRequest = Math.max(1, Math.floor(this.timeoutMs / 1500));
    this.thread = redisThread();
    this.thread.worker.postMessage({ port: port2, state: this.state, url, scripts: options.scripts ?? [], maxRetriesPerRequest }, [port2]);
    this.port.unref();
  }

  /** Sends one batch and waits for its replies. */
  exec(batch: RedisBatch): RedisReply[] {
    const result = this.roundTrip(batch);
    if (!Array.isArray(result)) throw new RunnerError('internal', `unexpected reply from Redis to a ${batch.kind} batch`);
    return result as RedisReply[];
  }

  /** Like `exec` with a `multi-if-absent` batch: undefined when the key exists. */
  execIfAbsent(absentKey: string, commands: RedisCommand[]): RedisReply[] | undefined {
    const result = this.roundTrip({ kind: 'multi-if-absent', absentKey, commands });
    return Array.isArray(result) ? (result as RedisReply[]) : undefined;
  }

  /** One command's value; a Redis error becomes a `storage` error. */
  call(name: string, ...args: (string | number)[]): unknown {
    return valuesOf(this.exec({ kind: 'pipeline', commands: [[name, ...args]] }), this.url)[0];
  }

  /** Ends the connection (QUIT); the thread stays for the process's other clients. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      // With Redis away, QUIT would only wait for it: the connection ends with the port.
      if (!this.failsFast()) this.roundTrip({ kind: 'quit' }, 5_000);
    } catch {
      // the connection goes anyway
    } finally {
      this.port.close();
    }
  }

  private roundTrip(batch: RedisBatch | { kind: 'quit' }, timeoutMs = this.timeoutMs): unknown {
    if (this.closed && batch.kind !== 'quit') throw new RunnerError('internal', 'the Redis run store is closed');
    const failure = this.thread.failure;
    if (failure) throw new RunnerError('storage', `run store ${redactUrl(this.url)}: ${failure.message}`, { cause: failure });
    // Each command waits through about timeoutMs of reconnects: once one has failed so, the next ones fail at
    // once while the connection stays down (a run that stops on it then ends in seconds, not a minute per write).
    if (this.failsFast()) {
      throw new RunnerError('storage', `run store ${redactUrl(this.url)}: Redis is still unreachable (${this.unreachable})`, {
        hint: 'check that Redis is running and reachable from this machine',
      });
    }
    const id = this.nextId++;
    this.port.postMessage({ id, batch });
    const deadline = performance.now() + timeoutMs;
    // The worker bumps the shared word after each reply it posts. Sleep while it stays the same; a late reply
    // to a batch that timed out also wakes us, and the 50 ms cap bounds any wait for a reply already counted.
    for (;;) {
      const seen = Atomics.load(this.state, 0);
      const reply = this.takeReply(id);
      if (reply) {
        if (reply.error === undefined) {
          // A pipeline's commands fail one by one: its reply holds their errors.
          this.unreachable = connectionFailureIn(reply.result);
          return reply.result;
        }
        if (CONNECTION_GAVE_UP.test(reply.error)) this.unreachable = reply.error;
        return this.failWith(reply.error);
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        this.unreachable = `no reply within ${timeoutMs} ms`;
        throw new RunnerError('storage', `run store ${redactUrl(this.url)}: no reply from Redis within ${timeoutMs} ms`, {
          hint: 'check that Redis is running and reachable from this machine',
        });
      }
      Atomics.wait(this.state, 0, seen, Math.min(left, 50));
    }
  }

  /** Whether commands fail at once: the last one failed for want of Redis, and the connection is still down. */
  private failsFast(): boolean {
    return this.unreachable !== undefined && Atomics.load(this.state, 1) === 0;
  }

  /** The reply to batch `id` if it has arrived; replies to earlier batches are dropped. */
  private takeReply(id: number): { result?: unknown; error?: string } | undefined {
    for (;;) {
      const message = receiveMessageOnPort(this.port)?.message as { id: number; result?: unknown; error?: string } | undefined;
      if (!message || message.id === id) return message;
    }
  }

  private failWith(error: string): never {
    throw storageError(this.url, error);
  }
}

/** The values of replies; the first error among them becomes a `storage` error. */
export function valuesOf(replies: RedisReply[], url: string): unknown[] {
  const failed = replies.find((reply) => reply.error !== undefined);
  if (failed) throw storageError(url, failed.error);
  return replies.map((reply) => reply.value);
}

/** A `storage` error for what Redis or ioredis said; a connection that gave up is said in words, with a hint. */
function storageError(url: string, error: string): RunnerError {
  if (!CONNECTION_GAVE_UP.test(error)) return new RunnerError('storage', `run store ${redactUrl(url)}: ${error}`);
  const retries = /max retries per request limit \(which is (\d+)\)/i.exec(error)?.[1];
  const said = retries ? `Redis could not be reached (gave up after ${retries} reconnect attempts)` : `Redis could not be reached (${error})`;
  return new RunnerError('storage', `run store ${redactUrl(url)}: ${said}`, { hint: 'check that Redis is running and reachable from this machine' });
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
