import type { CallToolResult, Client, ServerCapabilities, StandardSchemaV1, Tool } from '@modelcontextprotocol/client';
import { systemClock, type Clock } from '../clock.js';
import { CallError } from './call-error.js';

/** How long the app keeps a task's result after it ends, asked for in the request. */
export const TASK_TTL_MS = 10 * 60 * 1000;
/** Bounds on how often `tasks/get` is sent, whatever the app suggests as `pollInterval`. */
const MIN_POLL_MS = 100;
const MAX_POLL_MS = 5_000;
/** Each poll is a short request; only `tasks/result` waits for the work itself. */
const POLL_REQUEST_TIMEOUT_MS = 30_000;

interface TaskState {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
  pollInterval?: number;
}

export interface TaskCallOptions {
  signal?: AbortSignal;
  /** Upper bound for `tasks/result`, which waits until the task ends. */
  timeoutMs: number;
  onprogress?: (progress: { progress: number; message?: string }) => void;
  clock?: Clock;
}

// The SDK has no typed surface for the 2025-11-25 task methods, but its public
// `request(request, resultSchema)` takes any method with a caller's schema: these
// accept what the app sends and leave checking to the code below.
const anyResult: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': { version: 1, vendor: 'runner', validate: (value) => ({ value: value as Record<string, unknown> }) },
};

/** Whether a tool can only be called as a task (`execution.taskSupport: required`, 2025-11-25 Tasks). */
export function requiresTask(tool: Tool | undefined): boolean {
  return (tool as { execution?: { taskSupport?: string } } | undefined)?.execution?.taskSupport === 'required';
}

/**
 * Why a task-only tool cannot be called on this connection, or undefined when
 * it can: the app must offer task-augmented `tools/call`, on a 2025-era
 * connection (the 2026-07-28 Tasks extension is another wire).
 */
export function explainTaskUnavailable(app: string, tool: string, era: string | undefined, capabilities: ServerCapabilities | undefined): string | undefined {
  const offered = (capabilities as { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined)?.tasks?.requests?.tools?.call;
  if (era === 'modern') return `${app}.${tool} runs only as a task (execution.taskSupport: required); runner supports tasks on 2025-11-25 connections only, not the 2026-07-28 Tasks extension`;
  if (!offered) return `${app}.${tool} runs only as a task (execution.taskSupport: required), but ${app} does not offer task-augmented tools/call (capabilities.tasks.requests.tools.call)`;
  return undefined;
}

/**
 * Calls a tool as a task: `tools/call` with `task`, `tasks/get` until the
 * task ends or needs input, then `tasks/result`, which waits for the end and
 * carries the app's questions on the way. Status messages become progress. An
 * aborted call cancels the task (`tasks/cancel`, best effort).
 */
export async function callToolAsTask(client: Client, params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, string> }, options: TaskCallOptions): Promise<CallToolResult> {
  const { signal } = options;
  const clock = options.clock ?? systemClock;
  const created = await client.request({ method: 'tools/call', params: { ...params, task: { ttl: TASK_TTL_MS } } }, anyResult, { signal, timeout: POLL_REQUEST_TIMEOUT_MS });
  const first = readTask(created.task);
  // An app may run a task-capable call at once: then the answer is the result itself.
  if (!first) return created as unknown as CallToolResult;
  let task = first;
  let polls = 0;
  try {
    while (task.status === 'working') {
      options.onprogress?.({ progress: ++polls, message: task.statusMessage });
      await clock.sleep(Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, task.pollInterval ?? MIN_POLL_MS * 5)), signal);
      task = readTask(await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, anyResult, { signal, timeout: POLL_REQUEST_TIMEOUT_MS })) ?? task;
    }
    if (task.status === 'cancelled') {
      throw new CallError('tool', `the app cancelled task ${task.taskId}${task.statusMessage ? `: ${task.statusMessage}` : ''}`);
    }
    const result = await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, anyResult, { signal, timeout: options.timeoutMs });
    return result as unknown as CallToolResult;
  } catch (error) {
    if (signal?.aborted) void cancelTask(client, task.taskId);
    throw error;
  }
}

/** Asks the app to stop a task; never fails and never waits long (the call has already failed). */
async function cancelTask(client: Client, taskId: string): Promise<void> {
  try {
    await client.request({ method: 'tasks/cancel', params: { taskId } }, anyResult, { timeout: 2_000 });
  } catch {
    // The app may have finished, dropped the task or gone away.
  }
}

function readTask(value: unknown): TaskState | undefined {
  const task = value as Partial<TaskState> | undefined;
  return task && typeof task.taskId === 'string' && typeof task.status === 'string' ? (task as TaskState) : undefined;
}
