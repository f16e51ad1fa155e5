import { join } from 'node:path';
import type PQueue from 'p-queue';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { DEFAULT_MAX_RESULT_BYTES, type AppConnection, type ElicitationHandler } from '../apps/connection.js';
import type { AppRegistry } from '../apps/registry.js';
import { CallAbortReason, CallError, classifyCallError } from '../apps/call-error.js';
import type { AttemptRecord, ElicitationRecord, ItemRecord, StepErrorRecord, StepRecord } from '../artifacts/run-record.js';
import { outputsOf, saveResult, textOf } from '../artifacts/save-result.js';
import type { WriteBehind } from '../artifacts/write-behind.js';
import { storageError } from '../artifacts/storage-error.js';
import { BUILTIN_APP, BUILTIN_TOOLS, findBuiltinTool } from '../builtins/catalog.js';
import { runBuiltin } from '../builtins/run-builtin.js';
import type { Clock } from '../clock.js';
import { formatMs } from '../config/durations.js';
import { hintFor } from '../config/schema-diagnostics.js';
import type { RetryPolicy, RunnerConfig } from '../config/types.js';
import { evaluateTemplate, ExpressionError, type ExpressionContext } from '../workflow/expressions.js';
import type { Step } from '../workflow/types.js';
import type { CallEvent, PolicyOverrides } from './events.js';
import type { Limits } from './limits.js';
import { createElicitationHandler } from './elicit.js';
import { decidePolicy, describeRemedy, readToolHints, resolveAsk, type ToolHints } from './policy.js';
import { computeBackoffMs, isRetryableKind, isRetrySafe } from './retry.js';
import { checkToolArguments, coerceToolArguments } from './validate-args.js';
import { withDeadline } from './deadline.js';

/** The fields a step record and a foreach item record share: what one call fills in. */
export type CallRecord = Pick<StepRecord & ItemRecord, 'status' | 'attempts' | 'args' | 'outputs' | 'files' | 'error' | 'history' | 'elicitations'> & {
  text: string | string[];
};

/** Everything one call needs from its run. */
export interface CallEnvironment {
  config: RunnerConfig;
  apps: AppRegistry;
  limits: Limits;
  /** The run's (or, under serve, the workflow's) concurrency limit; null when unlimited. */
  workflowQueue: PQueue | null;
  clock: Clock;
  policy: PolicyOverrides;
  retry: RetryPolicy;
  /** Aborted with a CallAbortReason when the run is cancelled or times out. */
  signal: AbortSignal;
  /** Default per-call timeout when the step sets none. */
  defaultTimeoutMs: number;
  /** result.json files are written a moment later, after the next request went out. */
  writeBehind?: WriteBehind;
  emit: (event: CallEvent) => void;
  /** Notes that a step (or one of its foreach items) changed, for the store and run.json. */
  changed: (stepId: string, item?: number) => void;
  /** Records side-effecting calls before they are sent (see RunRecorder); absent: nothing is journaled. */
  journal?: CallJournal;
}

/** The call journal as a call sees it. */
export interface CallJournal {
  /** Durably records that the call is about to be sent; throws when it cannot (then it is not sent). */
  intent(call: { stepId: string; item?: number; attempt: number; uses: string }): string;
  /** Records the call's outcome, with the record changes before it. */
  settle(token: string, outcome: 'succeeded' | 'failed'): void;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Runs one call of a step (the step itself, or one foreach item): resolves the
 * app and tool, evaluates and validates the arguments, applies the policy,
 * then calls with timeouts and safe retries, and saves the result into
 * `callDir`. Never throws: the outcome is written into `target`.
 */
export async function runCall(
  step: Step,
  stepRecord: StepRecord,
  target: CallRecord,
  ctx: ExpressionContext,
  callDir: string,
  env: CallEnvironment,
  item?: number,
): Promise<void> {
  const { clock } = env;
  // Queued until its request is actually sent (limits, the app starting, a policy prompt): then running.
  const setStatus = (status: 'queued' | 'running') => {
    if (target.status === status) return;
    target.status = status;
    env.emit({ type: 'step', stepId: step.id, status, item });
    env.changed(step.id, item);
  };
  setStatus('queued');
  // The journal entry of the attempt in flight, when the tool has side effects.
  const sent: { token?: string } = {};
  const settle = (outcome: 'succeeded' | 'failed') => {
    if (sent.token !== undefined) env.journal?.settle(sent.token, outcome);
    sent.token = undefined;
  };
  // The step's own timeout, else the app's, else the workflow's default: for the call, and again for reading its linked resources.
  const timeoutMs = step.timeoutMs ?? env.config.apps[step.app]?.timeoutMs ?? env.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    // The step's timeout covers reaching the app too (spawn, handshake, tool list); the app's connect-timeout
    // bounds the same wait from the app's side. What is left of it after reaching is the first attempt's budget.
    const reachStarted = clock.now();
    const { connection, tool } = await reachTool(step, timeoutMs, env);
    const reachMs = clock.now() - reachStarted;
    const hints = readToolHints(tool);

    let args: unknown;
    try {
      args = evaluateTemplate(step.with, ctx);
    } catch (error) {
      if (error instanceof ExpressionError) throw new CallError('input', `in \`with\`: ${error.message}`);
      throw error;
    }
    // A number or boolean where the tool wants a string is sent as its string form (`${{ item }}` over [1, 2] into `text`).
    args = coerceToolArguments(tool, args);
    target.args = args;
    const problems = checkToolArguments(tool, args);
    if (problems.length > 0) {
      throw new CallError('input', `arguments do not match the inputSchema of ${step.uses}: ${problems.join('; ')}`);
    }

    const allowed = connection ? await applyPolicy(step, stepRecord, hints, args, env, item) : allowBuiltin(stepRecord);
    if (!allowed) return finish(target, 'denied', { kind: 'policy', message: deniedMessage(stepRecord), outcome: 'not-sent' }, env, step, item);

    const journaled = env.journal !== undefined && !hints.readOnly && !hints.idempotent;
    for (let attempt = 1; ; attempt++) {
      const startedAt = new Date(clock.now()).toISOString();
      target.attempts = attempt;
      try {
        const asked: ElicitationRecord[] = [];
        const onElicit = createElicitationHandler(step, ctx, env.policy.prompter, env.signal, asked, item);
        const beforeSend = journaled ? () => (sent.token = env.journal!.intent({ stepId: step.id, item, attempt, uses: step.uses })) : undefined;
        // Each attempt has the step's timeout for everything it waits for: (re)connecting, the call, reading linked
        // resources; the first attempt less the time it took to reach the app.
        const budgetMs = attempt === 1 ? Math.max(1, timeoutMs - reachMs) : timeoutMs;
        const time = { timeoutMs, budgetMs };
        const { result, usedMs, files } = connection
          ? await callOnce(step, args as Record<string, unknown>, time, env, { onElicit, beforeSend, onSent: () => setStatus('running'), item }).finally(() => {
              if (asked.length > 0) (target.elicitations ??= []).push(...asked);
            })
          : (setStatus('running'), await callBuiltin(step, args as Record<string, unknown>, callDir, time, env));
        // Linked resources are read from the connection that answered (the app may have been restarted since the first attempt).
        const saved = await saveCallResult(step, callDir, result, env, { timeoutMs, budgetMs: Math.max(1, budgetMs - usedMs) }, files);
        target.outputs = outputsOf(result);
        target.text = textOf(result);
        target.files = saved.files;
        if (result.isError) {
          throw new CallError('tool', `${step.uses} reported an error: ${firstLine(textOf(result)) || 'no message'}`);
        }
        target.history.push({ attempt, startedAt, endedAt: new Date(clock.now()).toISOString(), error: null });
        finish(target, 'succeeded', null, env, step, item);
        return settle('succeeded');
      } catch (caught) {
        const error = classifyCallError(caught, { app: step.app, signal: env.signal, sent: true });
        const record = toErrorRecord(error);
        target.history.push({ attempt, startedAt, endedAt: new Date(clock.now()).toISOString(), error: record });
        const safe = isRetrySafe(hints, error.outcome, env.retry.unsafe);
        if (attempt < env.retry.attempts && isRetryableKind(error.kind, env.retry) && safe && !env.signal.aborted) {
          const delayMs = computeBackoffMs(attempt, env.retry);
          env.emit({ type: 'retry', stepId: step.id, item, attempt, delayMs, error: record });
          env.changed(step.id, item);
          setStatus('queued');
          settle('failed');
          await clock.sleep(delayMs, env.signal);
          continue;
        }
        if (!safe && error.outcome === 'unknown') record.outcome = 'unknown';
        throw Object.assign(error, { record });
      }
    }
  } catch (caught) {
    // Once the run is stopped, whatever failed on the way out failed because of that.
    const stopped = env.signal.aborted && env.signal.reason instanceof CallAbortReason && !(caught instanceof CallError && caught.kind === env.signal.reason.kind);
    const error = stopped
      ? classifyCallError(env.signal.reason, { app: step.app, signal: env.signal, sent: caught instanceof CallError && caught.outcome === 'unknown' })
      : caught instanceof CallError
        ? caught
        : caught instanceof CallAbortReason
          ? new CallError(caught.kind, caught.message, { outcome: 'not-sent', cause: caught })
          : classifyCallError(caught, { app: step.app, signal: env.signal, sent: false });
    const record = (error as CallError & { record?: StepErrorRecord }).record ?? toErrorRecord(error);
    finish(target, error.kind === 'cancelled' ? 'cancelled' : 'failed', record, env, step, item);
    settle('failed');
  }
}

/**
 * Saves a result into the call's folder. A write that fails (disk full, name
 * too long) fails the step as `storage`: the call itself ran, so its outcome
 * counts as unknown for a tool with side effects and it is not retried.
 */
async function saveCallResult(step: Step, callDir: string, result: CallToolResult, env: CallEnvironment, time: AttemptTime, written: string[] = []) {
  // Linked resources are read from the connection that answered (the app may have been restarted since the first attempt),
  // under the same limits as calls, and in what the call left of the step's timeout.
  const reading = withDeadline(env.signal, env.clock, time.budgetMs, () => new CallAbortReason('timeout', `${step.uses}: its linked resources were not read within the step's timeout of ${formatMs(time.timeoutMs)} (timeout)`));
  try {
    if (step.app === BUILTIN_APP) {
      const saved = await saveResult(callDir, result, undefined, env.writeBehind, env.config.secretValues);
      return { ...saved, files: [...written, ...saved.files] };
    }
    const connection = await env.apps.get(step.app, reading.signal);
    const reader = connection.capabilities?.resources
      ? (uri: string) => env.limits.run(env.workflowQueue, step.app, () => connection.readResource(uri, reading.signal), reading.signal)
      : undefined;
    return await saveResult(callDir, result, reader, env.writeBehind, env.config.secretValues);
  } catch (error) {
    if (error instanceof CallError) throw error;
    if (error instanceof CallAbortReason) throw new CallError(error.kind, error.message, { outcome: 'unknown', cause: error });
    const failure = storageError(error, callDir);
    throw new CallError('storage', `${step.uses} ran, but its result could not be saved: ${failure.message}`, { outcome: 'unknown', cause: error });
  } finally {
    reading.clear();
  }
}

/** An attempt's time: the step's timeout (for messages) and what the attempt may still spend of it. */
interface AttemptTime {
  timeoutMs: number;
  budgetMs: number;
}

/**
 * Reaches the step's app and finds its tool, within the step's timeout: a
 * server that never answers the handshake fails the step as `timeout` (nothing
 * was sent) instead of holding it until the app's connect-timeout.
 */
async function reachTool(step: Step, timeoutMs: number, env: CallEnvironment): Promise<{ connection: AppConnection | null; tool: Tool }> {
  if (step.app === BUILTIN_APP) {
    const tool = findBuiltinTool(step.tool);
    if (!tool) {
      const names = BUILTIN_TOOLS.map((t) => t.name);
      throw new CallError('unavailable', `runner has no built-in tool \`${step.tool}\` (${hintFor(step.tool, names, 'built-in tools')})`, { outcome: 'not-sent' });
    }
    return { connection: null, tool };
  }
  const reaching = withDeadline(env.signal, env.clock, timeoutMs, () => notReady(step, timeoutMs));
  try {
    const connection = await env.apps.get(step.app, reaching.signal);
    const tool = await connection.getTool(step.tool, reaching.signal);
    if (!tool) {
      const names = (await connection.listTools(reaching.signal)).map((t) => t.name);
      throw new CallError('unavailable', `app \`${step.app}\` has no tool \`${step.tool}\` (${hintFor(step.tool, names, 'tools')})`);
    }
    return { connection, tool };
  } catch (error) {
    if (error instanceof CallAbortReason) throw new CallError(error.kind, error.message, { outcome: 'not-sent', cause: error });
    throw error;
  } finally {
    reaching.clear();
  }
}

function notReady(step: Step, timeoutMs: number): CallAbortReason {
  return new CallAbortReason('timeout', `${step.uses} was not sent: app \`${step.app}\` was not ready within the step's timeout of ${formatMs(timeoutMs)} (timeout)`);
}

/**
 * One attempt: takes a slot in every limit, then (re)connects if the app went
 * away and calls, with hard and idle timeouts. The hard timeout starts once
 * the slot is taken: waiting for the runner's own limits does not count.
 */
async function callOnce(
  step: Step,
  args: Record<string, unknown>,
  time: AttemptTime,
  env: CallEnvironment,
  hooks: {
    onElicit: ElicitationHandler;
    /** Records the intent of a side-effecting call; throws when it cannot (then nothing is sent). */
    beforeSend?: () => void;
    /** The request is about to go out. */
    onSent: () => void;
    item?: number;
  },
): Promise<{ result: CallToolResult; usedMs: number; files: string[] }> {
  const { onElicit, beforeSend, item } = hooks;
  let sent = false;
  try {
    return await env.limits.run(
      env.workflowQueue,
      step.app,
      async () => {
        const started = env.clock.now();
        const controller = new AbortController();
        const abortWith = (reason: unknown) => controller.abort(reason);
        const onRunAbort = () => abortWith(env.signal.reason);
        if (env.signal.aborted) onRunAbort();
        env.signal.addEventListener('abort', onRunAbort, { once: true });
        const hard = env.clock.timeout(time.budgetMs);
        const onHard = () =>
          abortWith(sent ? new CallAbortReason('timeout', `${step.uses} did not finish within ${formatMs(time.timeoutMs)} (timeout)`) : notReady(step, time.timeoutMs));
        hard.signal.addEventListener('abort', onHard, { once: true });
        let idle: { signal: AbortSignal; clear(): void } | undefined;
        const onIdle = () => abortWith(new CallAbortReason('timeout', `${step.uses} reported no progress for ${formatMs(step.idleTimeoutMs!)} (idle-timeout)`));
        const armIdle = () => {
          if (!step.idleTimeoutMs) return;
          idle?.signal.removeEventListener('abort', onIdle);
          idle?.clear();
          idle = env.clock.timeout(step.idleTimeoutMs);
          idle.signal.addEventListener('abort', onIdle, { once: true });
        };
        armIdle();
        try {
          let connection;
          try {
            connection = await env.apps.get(step.app, controller.signal);
          } catch (error) {
            if (error instanceof CallAbortReason) throw new CallError(error.kind, error.message, { outcome: 'not-sent', cause: error });
            throw error;
          }
          if (beforeSend) {
            try {
              beforeSend();
            } catch (error) {
              throw new CallError('storage', `${step.uses} was not sent: its intent could not be recorded: ${error instanceof Error ? error.message : String(error)}`, {
                outcome: 'not-sent',
                cause: error,
              });
            }
          }
          sent = true;
          hooks.onSent();
          const result = await connection.callTool(step.tool, args, {
            signal: controller.signal,
            // The SDK's own timer is only a backstop; the Clock-driven timers above decide.
            timeoutMs: time.budgetMs + 5_000,
            onprogress: (progress) => {
              armIdle();
              env.emit({ type: 'progress', stepId: step.id, item, progress: progress.progress, total: progress.total, message: progress.message });
            },
            onElicit,
          });
          return { result, usedMs: env.clock.now() - started, files: [] };
        } finally {
          env.signal.removeEventListener('abort', onRunAbort);
          hard.signal.removeEventListener('abort', onHard);
          hard.clear();
          idle?.signal.removeEventListener('abort', onIdle);
          idle?.clear();
        }
      },
      env.signal,
    );
  } catch (error) {
    throw classifyCallError(error, { app: step.app, signal: env.signal, sent });
  }
}

/**
 * One attempt of a built-in tool (`runner.transform`, `runner.save`): no app,
 * no limits to wait for, the same timeout as a call.
 */
async function callBuiltin(step: Step, args: Record<string, unknown>, callDir: string, time: AttemptTime, env: CallEnvironment) {
  const started = env.clock.now();
  const running = withDeadline(env.signal, env.clock, time.budgetMs, () => new CallAbortReason('timeout', `${step.uses} did not finish within ${formatMs(time.timeoutMs)} (timeout)`));
  try {
    const { result, files } = await runBuiltin({ tool: step.tool, args, callDir, signal: running.signal, maxResultBytes: DEFAULT_MAX_RESULT_BYTES });
    return { result, files, usedMs: env.clock.now() - started };
  } catch (error) {
    if (error instanceof CallAbortReason) throw new CallError(error.kind, error.message, { outcome: 'not-sent', cause: error });
    throw error;
  } finally {
    running.clear();
  }
}

/** Built-in tools only read their inputs and write into their own step folder: the policy always allows them. */
function allowBuiltin(stepRecord: StepRecord): true {
  stepRecord.policy = 'allow';
  policyReasons.set(stepRecord, 'built-in');
  return true;
}

/** Decides allow/deny for this call, asking the user when the policy says ask and a TTY is there. */
async function applyPolicy(
  step: Step,
  stepRecord: StepRecord,
  hints: ToolHints,
  args: unknown,
  env: CallEnvironment,
  item: number | undefined,
): Promise<boolean> {
  const decision = decidePolicy(step.uses, hints, env.config.policy);
  const resolved = resolveAsk(step.uses, decision, {
    yes: env.policy.yes,
    allow: env.policy.allow,
    interactive: env.policy.approver !== undefined,
  });
  if (resolved === 'prompt') {
    const approved = await env.policy.approver!({
      app: step.app,
      tool: step.tool,
      stepId: step.id,
      item,
      args,
      hints,
      reason: decision.reason,
      signal: env.signal,
    });
    stepRecord.policy = approved ? 'allow' : 'deny';
    policyReasons.set(stepRecord, approved ? `${decision.reason}; allowed at the prompt` : `${decision.reason}; refused at the prompt`);
    return approved;
  }
  stepRecord.policy = resolved.action === 'ask' ? 'deny' : resolved.action;
  policyReasons.set(stepRecord, resolved.reason);
  return resolved.action === 'allow';
}

const policyReasons = new WeakMap<StepRecord, string>();

function deniedMessage(stepRecord: StepRecord): string {
  const reason = policyReasons.get(stepRecord) ?? 'policy';
  const remedy = describeRemedy(stepRecord.uses, reason);
  return `${stepRecord.uses} denied by policy (${reason}); nothing was sent${remedy ? `; ${remedy}` : ''}`;
}

function finish(
  target: CallRecord,
  status: CallRecord['status'],
  error: StepErrorRecord | null,
  env: CallEnvironment,
  step: Step,
  item: number | undefined,
): void {
  target.status = status;
  target.error = error;
  env.emit({ type: 'step', stepId: step.id, status, item, error });
  env.changed(step.id, item);
}

function toErrorRecord(error: CallError): StepErrorRecord {
  const record: StepErrorRecord = { kind: error.kind, message: error.message };
  if (error.outcome === 'not-sent') record.outcome = 'not-sent';
  return record;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim().length > 0) ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

export function itemDir(stepDir: string, index: number): string {
  return join(stepDir, String(index));
}

export type { AttemptRecord };
