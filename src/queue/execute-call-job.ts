import type { CallToolResult } from '@modelcontextprotocol/client';
import { DEFAULT_MAX_RESULT_BYTES, type ElicitationHandler } from '../apps/connection.js';
import type { AppRegistry } from '../apps/registry.js';
import { CallAbortReason, CallError, classifyCallError } from '../apps/call-error.js';
import { addKeepingEnds, MAX_RECORDED_MESSAGE_CHARS, type ElicitationRecord, type StepErrorRecord } from '../artifacts/run-record.js';
import { outputsOf, saveResult, textOf } from '../artifacts/save-result.js';
import type { WriteBehind } from '../artifacts/write-behind.js';
import { storageError } from '../artifacts/storage-error.js';
import { BUILTIN_APP } from '../builtins/catalog.js';
import { runBuiltin } from '../builtins/run-builtin.js';
import { isoTime, type Clock } from '../clock.js';
import { formatMs } from '../config/durations.js';
import { messageOf } from '../errors.js';
import { cutText } from '../terminal-text.js';
import { followAbort, giveBackController, takeController, withDeadline } from '../scheduler/deadline.js';
import type { Limits } from '../scheduler/limits.js';
import type { Slots } from '../scheduler/slots.js';
import { computeBackoffMs, isRetryableKind } from '../scheduler/retry.js';
import type { CallJob, CallOutcome } from './call-job.js';

/** What a process that executes calls holds: its app connections, its limits, its clock. */
export interface CallHost {
  apps: AppRegistry;
  limits: Limits;
  /** The run's workflow `concurrency`; null when unlimited or not known here (a worker). */
  workflowQueue: Slots | null;
  clock: Clock;
  /** Secret values masked in result.json. */
  secretValues: string[];
  /** result.json files are written a moment later, after the next request went out. */
  writeBehind?: WriteBehind;
}

/** What the caller of a job hears while it runs; every hook is optional (a queue worker has none of the in-process ones). */
export interface CallHooks {
  /**
   * Durably records that the request is about to be sent; throws when it
   * cannot (then nothing is sent). Only for `sideEffects` jobs. May return the
   * journal entry's id (the queue names the job after it).
   */
  intent?(attempt: number): string | void | Promise<string | void>;
  /**
   * The attempt whose intent was recorded ended: `retrying` when another attempt follows (it was safe to
   * repeat), else it was the call's last, and its outcome goes into the step's record next.
   */
  settle?(outcome: 'succeeded' | 'failed', retrying?: boolean): void;
  /** Waiting for limits or a retry (`queued`), or the request went out (`running`). */
  onStatus?(status: 'queued' | 'running', attempt: number): void;
  onRetry?(attempt: number, delayMs: number, error: StepErrorRecord): void;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** Makes the handler answering the tool's questions for one attempt, logging into `asked`. */
  elicit?(asked: ElicitationRecord[]): ElicitationHandler;
}

/**
 * Executes one call job: takes a slot in every limit, reaches the app, calls
 * with hard and idle timeouts, retries where the job allows, and saves the
 * result into the job's folder. Never throws: failures are in the outcome.
 * `signal` aborts it with a CallAbortReason (run cancelled or timed out).
 */
export async function executeCallJob(job: CallJob, host: CallHost, signal: AbortSignal, hooks: CallHooks = {}): Promise<CallOutcome> {
  const { clock } = host;
  const outcome: CallOutcome = { status: 'failed', attempts: 0, error: null, history: [] };
  let journaled = false;
  const settle = (result: 'succeeded' | 'failed', retrying = false) => {
    if (journaled) hooks.settle?.(result, retrying);
    journaled = false;
  };
  try {
    for (let attempt = 1; ; attempt++) {
      const startedAt = isoTime(clock.now());
      outcome.attempts = attempt;
      try {
        const asked: ElicitationRecord[] = [];
        const intent = job.sideEffects && hooks.intent ? async () => ((await hooks.intent!(attempt)), (journaled = true)) : undefined;
        // Each attempt has the step's timeout for everything it waits for: (re)connecting, the call, reading linked
        // resources; the first attempt less the time it took to reach the app.
        const budgetMs = attempt === 1 ? job.firstBudgetMs : job.timeoutMs;
        const time = { timeoutMs: job.timeoutMs, budgetMs };
        const { result, usedMs, files } =
          job.app === BUILTIN_APP
            ? (hooks.onStatus?.('running', attempt), await callBuiltin(job, time, host, signal))
            : await callOnce(job, time, host, signal, { onElicit: hooks.elicit?.(asked), intent, onSent: () => hooks.onStatus?.('running', attempt), onProgress: hooks.onProgress }).finally(() => {
                for (const entry of asked) addKeepingEnds((outcome.elicitations ??= []), entry);
              });
        const saved = await saveCallResult(job, result, host, signal, { timeoutMs: job.timeoutMs, budgetMs: Math.max(1, budgetMs - usedMs) }, files);
        outcome.outputs = outputsOf(result);
        outcome.text = textOf(result);
        outcome.files = saved.files;
        if (result.isError) {
          throw new CallError('tool', `${job.uses} reported an error: ${firstLine(textOf(result)) || 'no message'}`);
        }
        addKeepingEnds(outcome.history, { attempt, startedAt, endedAt: isoTime(clock.now()), error: null });
        outcome.status = 'succeeded';
        settle('succeeded');
        return outcome;
      } catch (caught) {
        const error = classifyCallError(caught, { app: job.app, signal, sent: true });
        const record = toErrorRecord(error);
        addKeepingEnds(outcome.history, { attempt, startedAt, endedAt: isoTime(clock.now()), error: record });
        const safe = error.outcome === 'not-sent' || job.retrySafe;
        // An answer refused by a limit would be refused again: the call is not repeated.
        if (attempt < job.retry.attempts && isRetryableKind(error.kind, job.retry) && safe && !error.refusedByLimit && !signal.aborted) {
          const delayMs = computeBackoffMs(attempt, job.retry);
          hooks.onRetry?.(attempt, delayMs, record);
          hooks.onStatus?.('queued', attempt);
          settle('failed', true);
          await clock.sleep(delayMs, signal);
          continue;
        }
        if (!safe && error.outcome === 'unknown') record.outcome = 'unknown';
        throw Object.assign(error, { record });
      }
    }
  } catch (caught) {
    const record = failureRecord(caught, job.app, signal);
    outcome.status = record.kind === 'cancelled' ? 'cancelled' : 'failed';
    outcome.error = record;
    settle('failed');
    return outcome;
  }
}

/** The error record of a call that failed; once `signal` stopped the run, whatever failed on the way out failed because of that. */
export function failureRecord(caught: unknown, app: string, signal: AbortSignal): StepErrorRecord {
  const stopped = signal.aborted && signal.reason instanceof CallAbortReason && !(caught instanceof CallError && caught.kind === signal.reason.kind);
  const error = stopped
    ? classifyCallError(signal.reason, { app, signal, sent: caught instanceof CallError && caught.outcome === 'unknown' })
    : caught instanceof CallError
      ? caught
      : caught instanceof CallAbortReason
        ? new CallError(caught.kind, caught.message, { outcome: 'not-sent', cause: caught })
        : classifyCallError(caught, { app, signal, sent: false });
  return (error as CallError & { record?: StepErrorRecord }).record ?? toErrorRecord(error);
}

/** An attempt's time: the step's timeout (for messages) and what the attempt may still spend of it. */
interface AttemptTime {
  timeoutMs: number;
  budgetMs: number;
}

/**
 * Saves a result into the call's folder. A write that fails (disk full, name
 * too long) fails the step as `storage`: the call itself ran, so its outcome
 * counts as unknown for a tool with side effects and it is not retried.
 */
async function saveCallResult(job: CallJob, result: CallToolResult, host: CallHost, signal: AbortSignal, time: AttemptTime, written: string[]) {
  // Linked resources are read from the connection that answered (the app may have been restarted since the first attempt),
  // under the same limits as calls, and in what the call left of the step's timeout.
  // A result without links (nearly all) needs no reader, so no deadline: its timer, controller and listeners cost every call.
  const reading = hasLinks(result)
    ? withDeadline(signal, host.clock, time.budgetMs, () => new CallAbortReason('timeout', `${job.uses}: its linked resources were not read within the step's timeout of ${formatMs(time.timeoutMs)} (timeout)`))
    : undefined;
  try {
    if (job.app === BUILTIN_APP) {
      const saved = await saveResult(job.callDir, result, undefined, host.writeBehind, host.secretValues);
      return { ...saved, files: [...written, ...saved.files] };
    }
    if (!reading) return await saveResult(job.callDir, result, undefined, host.writeBehind, host.secretValues);
    const connection = await host.apps.get(job.app, reading.signal);
    const reader = connection.capabilities?.resources
      ? (uri: string) => host.limits.run(host.workflowQueue, job.app, () => connection.readResource(uri, reading.signal), reading.signal)
      : undefined;
    return await saveResult(job.callDir, result, reader, host.writeBehind, host.secretValues);
  } catch (error) {
    if (error instanceof CallError) throw error;
    if (error instanceof CallAbortReason) throw new CallError(error.kind, error.message, { outcome: 'unknown', cause: error });
    const failure = storageError(error, job.callDir);
    throw new CallError('storage', `${job.uses} ran, but its result could not be saved: ${failure.message}`, { outcome: 'unknown', cause: error });
  } finally {
    reading?.clear();
  }
}

function hasLinks(result: CallToolResult): boolean {
  return Array.isArray(result.content) && result.content.some((block) => block.type === 'resource_link');
}

function notReady(job: CallJob, timeoutMs: number): CallAbortReason {
  return new CallAbortReason('timeout', `${job.uses} was not sent: app \`${job.app}\` was not ready within the step's timeout of ${formatMs(timeoutMs)} (timeout)`);
}

/**
 * One attempt: takes a slot in every limit, then (re)connects if the app went
 * away and calls, with hard and idle timeouts. The hard timeout starts once
 * the slot is taken: waiting for the runner's own limits does not count.
 */
async function callOnce(
  job: CallJob,
  time: AttemptTime,
  host: CallHost,
  signal: AbortSignal,
  hooks: {
    onElicit?: ElicitationHandler;
    /** Records the intent of a side-effecting call; throws when it cannot (then nothing is sent). */
    intent?: () => Promise<unknown>;
    /** The request is about to go out. */
    onSent: () => void;
    onProgress?: CallHooks['onProgress'];
  },
): Promise<{ result: CallToolResult; usedMs: number; files: string[] }> {
  let sent = false;
  try {
    return await host.limits.run(
      host.workflowQueue,
      job.app,
      async () => {
        const started = host.clock.now();
        // One controller for the call, aborted by the run (through one listener shared by every call) or by one plain timer.
        // It goes back for the next call when this one ends unaborted, unless an app start saw its signal.
        const controller = takeController();
        let reusable = true;
        let done = false;
        const abortWith = (reason: unknown) => controller.abort(reason);
        const unfollow = followAbort(signal, abortWith);
        const clearHard = host.clock.after(time.budgetMs, () =>
          abortWith(sent ? new CallAbortReason('timeout', `${job.uses} did not finish within ${formatMs(time.timeoutMs)} (timeout)`) : notReady(job, time.timeoutMs)),
        );
        let clearIdle: (() => void) | undefined;
        const onIdle = () => abortWith(new CallAbortReason('timeout', `${job.uses} reported no progress for ${formatMs(job.idleTimeoutMs!)} (idle-timeout)`));
        const armIdle = () => {
          if (!job.idleTimeoutMs || done) return;
          clearIdle?.();
          clearIdle = host.clock.after(job.idleTimeoutMs, onIdle);
        };
        armIdle();
        try {
          let connection;
          try {
            connection = host.apps.live(job.app);
            if (!connection) {
              reusable = false;
              connection = await host.apps.get(job.app, controller.signal);
            }
          } catch (error) {
            if (error instanceof CallAbortReason) throw new CallError(error.kind, error.message, { outcome: 'not-sent', cause: error });
            throw error;
          }
          if (hooks.intent) {
            try {
              await hooks.intent();
            } catch (error) {
              throw new CallError('storage', `${job.uses} was not sent: its intent could not be recorded: ${messageOf(error)}`, {
                outcome: 'not-sent',
                cause: error,
              });
            }
          }
          sent = true;
          hooks.onSent();
          const result = await connection.callTool(job.tool, job.args, {
            signal: controller.signal,
            // The SDK's own timer is only a backstop; the Clock-driven timers above decide.
            timeoutMs: time.budgetMs + 5_000,
            onprogress: (progress) => {
              armIdle();
              // Passed on to the terminal, the UI and, from a worker, through Redis: an app's message is cut as the record cuts one.
              const { message } = progress;
              hooks.onProgress?.(message !== undefined && message.length > MAX_RECORDED_MESSAGE_CHARS ? { ...progress, message: cutText(message, MAX_RECORDED_MESSAGE_CHARS) } : progress);
            },
            onElicit: hooks.onElicit,
          });
          return { result, usedMs: host.clock.now() - started, files: [] };
        } finally {
          done = true;
          unfollow();
          clearHard();
          clearIdle?.();
          if (reusable) giveBackController(controller);
        }
      },
      signal,
    );
  } catch (error) {
    throw classifyCallError(error, { app: job.app, signal, sent });
  }
}

/**
 * One attempt of a built-in tool (`runner.transform`, `runner.save`): no app,
 * no limits to wait for, the same timeout as a call.
 */
async function callBuiltin(job: CallJob, time: AttemptTime, host: CallHost, signal: AbortSignal) {
  const started = host.clock.now();
  const running = withDeadline(signal, host.clock, time.budgetMs, () => new CallAbortReason('timeout', `${job.uses} did not finish within ${formatMs(time.timeoutMs)} (timeout)`));
  try {
    const { result, files } = await runBuiltin({ tool: job.tool, args: job.args, callDir: job.callDir, signal: running.signal, maxResultBytes: DEFAULT_MAX_RESULT_BYTES });
    return { result, files, usedMs: host.clock.now() - started };
  } catch (error) {
    if (error instanceof CallAbortReason) throw new CallError(error.kind, error.message, { outcome: 'not-sent', cause: error });
    throw error;
  } finally {
    running.clear();
  }
}

export function toErrorRecord(error: CallError): StepErrorRecord {
  const record: StepErrorRecord = { kind: error.kind, message: cutText(error.message, MAX_RECORDED_MESSAGE_CHARS) };
  if (error.outcome === 'not-sent') record.outcome = 'not-sent';
  return record;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim().length > 0) ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
