import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/client';
import type { AppConnection } from '../apps/connection.js';
import type { AppRegistry } from '../apps/registry.js';
import { CallAbortReason, CallError } from '../apps/call-error.js';
import { addKeepingEnds, type AttemptRecord, type ItemRecord, type StepErrorRecord, type StepRecord } from '../artifacts/run-record.js';
import type { WriteBehind } from '../artifacts/write-behind.js';
import { BUILTIN_APP, BUILTIN_TOOLS, findBuiltinTool } from '../builtins/catalog.js';
import type { Clock } from '../clock.js';
import { formatMs } from '../config/durations.js';
import { hintFor } from '../config/schema-diagnostics.js';
import type { RetryPolicy, RunnerConfig } from '../config/types.js';
import type { CallJob, CallOutcome } from '../queue/call-job.js';
import { executeCallJob, failureRecord, type CallHooks, type CallHost } from '../queue/execute-call-job.js';
import { evaluateTemplate, ExpressionError, type ExpressionContext } from '../workflow/expressions.js';
import type { Step } from '../workflow/types.js';
import type { CallEvent, PolicyOverrides } from './events.js';
import type { Limits } from './limits.js';
import type { Slots } from './slots.js';
import { createElicitationHandler } from './elicit.js';
import { decidePolicy, describeRemedy, readToolHints, resolveAsk, type ToolHints } from './policy.js';
import { answerCommands, settleApproval } from './approval.js';
import { checkToolArguments, coerceToolArguments } from './validate-args.js';
import { withDeadline } from './deadline.js';

/** Executes a call job elsewhere (the queue) and resolves with its outcome; see CallJob. */
export type CallDispatcher = (job: CallJob, signal: AbortSignal, hooks: CallHooks) => Promise<CallOutcome>;

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
  workflowQueue: Slots | null;
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
  /** Where app calls are executed; absent: in this process. */
  dispatch?: CallDispatcher;
  /** With a runner.lock: what changed in a tool since it was locked (undefined: nothing); a changed tool is not called. */
  checkTool?: (app: string, tool: Tool) => string | undefined;
  /** The run and workflow a job belongs to, for the queue's job data. */
  runId?: string;
  workflowName?: string;
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
  // The step's own timeout, else the app's, else the workflow's default: for the call, and again for reading its linked resources.
  const timeoutMs = step.timeoutMs ?? env.config.apps[step.app]?.timeoutMs ?? env.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    // The step's timeout covers reaching the app too (spawn, handshake, tool list); the app's connect-timeout
    // bounds the same wait from the app's side. What is left of it after reaching is the first attempt's budget.
    const reachStarted = clock.now();
    const { connection, tool } = await reachTool(step, timeoutMs, env);
    const changed = connection && env.checkTool?.(step.app, tool);
    if (changed) {
      throw new CallError('policy', `${step.uses} changed since runner.lock was written (${changed}); it was not called`, { outcome: 'not-sent' });
    }
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
    if (allowed === 'wait') return waitForApproval(target, env, step, item);
    if (!allowed) return finish(target, 'denied', { kind: 'policy', message: deniedMessage(stepRecord), outcome: 'not-sent' }, env, step, item);

    // Optional keys assigned, not spread in: a spread of `cond && { key }` costs every call an object and a copy.
    const job: CallJob = {
      runId: env.runId ?? '',
      workflow: env.workflowName ?? '',
      stepId: step.id,
      uses: step.uses,
      app: step.app,
      tool: step.tool,
      args: args as Record<string, unknown>,
      callDir,
      retrySafe: hints.readOnly || hints.idempotent || env.retry.unsafe,
      sideEffects: !hints.readOnly && !hints.idempotent,
      retry: env.retry,
      timeoutMs,
      firstBudgetMs: Math.max(1, timeoutMs - reachMs),
    };
    if (item !== undefined) job.item = item;
    if (step.idleTimeoutMs !== undefined) job.idleTimeoutMs = step.idleTimeoutMs;
    const hooks = callHooks(step, ctx, target, env, item, setStatus);
    try {
      const outcome = await dispatchCall(job, env, hooks);
      applyOutcome(target, outcome);
      finish(target, outcome.status, outcome.error, env, step, item);
    } finally {
      // A call's last attempt is settled in the journal together with the record of how the call ended, never
      // before it: a crash in between leaves the intent open (outcome unknown), not a settled call whose step
      // looks unrun and would be sent again on resume.
      hooks.settleLast();
    }
  } catch (caught) {
    const record = failureRecord(caught, step.app, env.signal);
    finish(target, record.kind === 'cancelled' ? 'cancelled' : 'failed', record, env, step, item);
  }
}

/** Built-in tools always run here; app calls go to the queue in queue mode, else run in this process. */
function dispatchCall(job: CallJob, env: CallEnvironment, hooks: CallHooks): Promise<CallOutcome> {
  if (env.dispatch && job.app !== BUILTIN_APP) {
    // The workflow's `concurrency` is the coordinator's to hold: at most that many of its jobs out at once.
    const dispatch = env.dispatch;
    const send = () => dispatch(job, env.signal, hooks);
    return env.workflowQueue ? env.workflowQueue.run(send) : send();
  }
  return executeCallJob(job, hostOf(env), env.signal, hooks);
}

/** The call host of a run's environment: made once per environment, not per call. */
const hosts = new WeakMap<CallEnvironment, CallHost>();
function hostOf(env: CallEnvironment): CallHost {
  let host = hosts.get(env);
  if (!host) {
    host = {
      apps: env.apps,
      limits: env.limits,
      workflowQueue: env.workflowQueue,
      clock: env.clock,
      secretValues: env.config.secretValues,
      writeBehind: env.writeBehind,
    };
    hosts.set(env, host);
  }
  return host;
}

/** The hooks through which a call's journal, events and questions reach the run. */
function callHooks(
  step: Step,
  ctx: ExpressionContext,
  target: CallRecord,
  env: CallEnvironment,
  item: number | undefined,
  setStatus: (status: 'queued' | 'running') => void,
): CallHooks & { settleLast(): void } {
  // The journal entry of the attempt in flight, when the tool has side effects.
  let token: string | undefined;
  // The outcome of the call's last attempt: written by `settleLast`, once the record says how the call ended.
  let last: { token: string; outcome: 'succeeded' | 'failed' } | undefined;
  const hooks: CallHooks & { settleLast(): void } = {
    settleLast: () => {
      if (last) env.journal!.settle(last.token, last.outcome);
      last = undefined;
    },
    onStatus: (status, attempt) => {
      target.attempts = attempt;
      setStatus(status);
    },
    onRetry: (attempt, delayMs, error) => {
      env.emit({ type: 'retry', stepId: step.id, item, attempt, delayMs, error });
      env.changed(step.id, item);
    },
    onProgress: (progress) => env.emit({ type: 'progress', stepId: step.id, item, progress: progress.progress, total: progress.total, message: progress.message }),
    elicit: (asked) => createElicitationHandler(step, ctx, env.policy.prompter, env.signal, asked, item),
  };
  const journal = env.journal;
  if (journal) {
    hooks.intent = (attempt: number) => (token = journal.intent({ stepId: step.id, item, attempt, uses: step.uses }));
    hooks.settle = (outcome: 'succeeded' | 'failed', retrying?: boolean) => {
      if (token === undefined) return;
      // An attempt followed by another was safe to repeat: what the record says meanwhile does not matter.
      if (retrying) journal.settle(token, outcome);
      else last = { token, outcome };
      token = undefined;
    };
  }
  return hooks;
}

/** Copies what the call gave into its record; the history is appended to (a resumed call keeps its earlier attempts). */
function applyOutcome(target: CallRecord, outcome: CallOutcome): void {
  if (outcome.attempts > 0) target.attempts = outcome.attempts;
  if (outcome.outputs !== undefined) target.outputs = outcome.outputs;
  if (outcome.text !== undefined) target.text = outcome.text;
  if (outcome.files !== undefined) target.files = outcome.files;
  for (const entry of outcome.history) addKeepingEnds(target.history, entry);
  for (const entry of outcome.elicitations ?? []) addKeepingEnds((target.elicitations ??= []), entry);
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
  // An app already open with its tool list loaded needs no wait, so no deadline (a timer, a controller, two listeners per call).
  const live = env.apps.live(step.app);
  const cached = live?.cachedTool(step.tool);
  if (live && cached) return { connection: live, tool: cached };
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

/** Built-in tools only read their inputs and write into their own step folder: the policy always allows them. */
function allowBuiltin(stepRecord: StepRecord): true {
  stepRecord.policy = 'allow';
  stepRecord.policyReason = 'built-in';
  policyReasons.set(stepRecord, 'built-in');
  return true;
}

/**
 * Decides allow/deny for this call, asking the user when the policy says ask
 * and a TTY is there; with none, and `headless-ask: wait`, from the step's
 * approval (`wait` while it has no answer).
 */
async function applyPolicy(
  step: Step,
  stepRecord: StepRecord,
  hints: ToolHints,
  args: unknown,
  env: CallEnvironment,
  item: number | undefined,
): Promise<boolean | 'wait'> {
  const decision = decidePolicy(step.uses, hints, env.config.policy);
  const resolved = resolveAsk(step.uses, decision, {
    yes: env.policy.yes,
    allow: env.policy.allow,
    interactive: env.policy.approver !== undefined,
    headless: env.config.policy.headlessAsk,
  });
  // A step answered with `runner approve`/`deny` keeps that answer when it runs again, even from a terminal.
  const waits = resolved !== 'prompt' && resolved.action === 'ask';
  const answered = resolved === 'prompt' && stepRecord.approval?.decision !== undefined;
  if (waits || answered) {
    const state = settleApproval(stepRecord, env.clock.now(), env.config.policy.approvalTimeoutMs);
    stepRecord.policy = state.action === 'wait' ? 'ask' : state.action;
    stepRecord.policyReason = `${decision.reason}; ${state.reason}`;
    policyReasons.set(stepRecord, stepRecord.policyReason);
    return state.action === 'wait' ? 'wait' : state.action === 'allow';
  }
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
    stepRecord.policyReason = approved ? `${decision.reason}; allowed at the prompt` : `${decision.reason}; refused at the prompt`;
    // A waiting step resumed on a terminal: the prompt's answer is its approval's answer.
    const pending = stepRecord.approval;
    if (pending && !pending.decision) {
      const at = new Date(env.clock.now()).toISOString();
      stepRecord.approval = { ...pending, decision: approved ? 'approved' : 'denied', ...(env.policy.user !== undefined && { by: env.policy.user }), at, via: 'cli' };
    }
    policyReasons.set(stepRecord, stepRecord.policyReason);
    return approved;
  }
  stepRecord.policy = resolved.action === 'ask' ? 'deny' : resolved.action;
  stepRecord.policyReason = resolved.reason;
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

/** Leaves the call unsent, waiting for `runner approve` or `runner deny`; the event says how to answer. */
function waitForApproval(target: CallRecord, env: CallEnvironment, step: Step, item: number | undefined): void {
  target.status = 'waiting';
  target.error = null;
  const reason = env.runId ? `needs approval: ${answerCommands(env.runId, step.id)}` : 'needs approval';
  env.emit({ type: 'step', stepId: step.id, status: 'waiting', item, reason });
  env.changed(step.id, item);
}

export function itemDir(stepDir: string, index: number): string {
  return join(stepDir, String(index));
}

export type { AttemptRecord };
