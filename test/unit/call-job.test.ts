import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import type { AppRegistry } from '../../src/apps/registry.js';
import { CallError } from '../../src/apps/call-error.js';
import { systemClock } from '../../src/clock.js';
import type { RunnerConfig } from '../../src/config/types.js';
import type { CallJob, CallOutcome } from '../../src/queue/call-job.js';
import { processCallJob } from '../../src/queue/call-worker.js';
import { executeCallJob, type CallHost } from '../../src/queue/execute-call-job.js';
import { Limits } from '../../src/scheduler/limits.js';

// The seam between coordinator and worker: a CallJob in, a CallOutcome out, both plain JSON.

/** An app whose tool answers with `answers` in turn: a result, or an error thrown after the request went out. */
function hostWith(answers: (object | Error)[], log: string[] = []): CallHost {
  const connection = {
    capabilities: {},
    callTool: async (tool: string, args: Record<string, unknown>) => {
      log.push(`call ${tool} ${JSON.stringify(args)}`);
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return next;
    },
  };
  const apps = { get: async () => connection, live: () => undefined } as unknown as AppRegistry;
  const config = { concurrency: 4, apps: {} } as unknown as RunnerConfig;
  return { apps, limits: new Limits(config), workflowQueue: null, clock: systemClock, secretValues: [] };
}

/** hostWith([OK]) whose tool first sends these progress notifications, all at once. */
async function hostSendingProgress(notifications: object[]): Promise<CallHost> {
  const host = hostWith([OK]);
  const connection = await host.apps.get('app');
  const callTool = connection.callTool.bind(connection);
  Object.assign(connection, {
    callTool: async (tool: string, args: Record<string, unknown>, options: { onprogress?: (p: object) => void }) => {
      for (const notification of notifications) options.onprogress?.(notification);
      return callTool(tool, args);
    },
  });
  return host;
}

function jobFor(overrides: Partial<CallJob> = {}): CallJob {
  return {
    runId: 'r1',
    workflow: 'wf',
    stepId: 'a',
    uses: 'app.tool',
    app: 'app',
    tool: 'tool',
    args: { text: 'hi' },
    callDir: mkdtempSync(join(tmpdir(), 'runner-call-job-')),
    retrySafe: false,
    sideEffects: true,
    retry: { attempts: 3, delayMs: 1, backoff: 1, maxDelayMs: 1, on: ['transport', 'timeout', 'protocol'], unsafe: false },
    timeoutMs: 5_000,
    firstBudgetMs: 5_000,
    ...overrides,
  };
}

const OK = { content: [{ type: 'text', text: 'done' }], structuredContent: { done: true } };
const lost = () => new CallError('transport', 'app connection lost', { outcome: 'unknown' });

describe('executeCallJob', () => {
  it('runs a job and gives an outcome that survives JSON unchanged, with result.json saved by the worker', async () => {
    const job = jobFor({ sideEffects: false, retrySafe: true });
    const outcome = await executeCallJob(JSON.parse(JSON.stringify(job)), hostWith([OK]), new AbortController().signal);
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 1, outputs: { done: true }, text: 'done', error: null });
    expect(JSON.parse(JSON.stringify(outcome))).toEqual(outcome);
    expect(JSON.parse(readFileSync(join(job.callDir, 'result.json'), 'utf8')).structuredContent).toEqual({ done: true });
  });

  it('commits the intent of a call with side effects before the request is sent', async () => {
    const log: string[] = [];
    const outcome = await executeCallJob(jobFor(), hostWith([OK], log), new AbortController().signal, {
      intent: (attempt) => void log.push(`intent ${attempt}`),
      settle: (result) => void log.push(`settle ${result}`),
    });
    expect(outcome.status).toBe('succeeded');
    expect(log).toEqual(['intent 1', 'call tool {"text":"hi"}', 'settle succeeded']);
  });

  it('sends nothing when the intent cannot be recorded', async () => {
    const log: string[] = [];
    const outcome = await executeCallJob(jobFor(), hostWith([OK], log), new AbortController().signal, {
      intent: () => {
        throw new Error('disk full');
      },
    });
    expect(log).toEqual([]);
    expect(outcome).toMatchObject({ status: 'failed', error: { kind: 'storage', outcome: 'not-sent' } });
  });

  it('repeats a sent request only when the coordinator said it is safe', async () => {
    const unsafe = await executeCallJob(jobFor(), hostWith([lost(), OK]), new AbortController().signal);
    expect(unsafe).toMatchObject({ status: 'failed', attempts: 1, error: { kind: 'transport', outcome: 'unknown' } });

    const safe = await executeCallJob(jobFor({ retrySafe: true }), hostWith([lost(), OK]), new AbortController().signal);
    expect(safe).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(safe.history.map((attempt) => attempt.error?.kind ?? null)).toEqual(['transport', null]);
  });
});

describe('processCallJob (the BullMQ processor)', () => {
  const bullJob = (data: CallJob, progress: unknown, marks: unknown[] = []) =>
    ({ data, progress, updateProgress: async (value: unknown) => void marks.push(value) }) as unknown as Job<CallJob, CallOutcome>;

  it('marks a side-effecting job as sent before sending it', async () => {
    const marks: unknown[] = [];
    const outcome = await processCallJob(bullJob(jobFor(), 0, marks), hostWith([OK]));
    expect(outcome.status).toBe('succeeded');
    expect(marks).toEqual([{ sent: 1 }]);
  });

  it('does not send again a job handed back after its worker died once it was sent: outcome unknown', async () => {
    const log: string[] = [];
    const outcome = await processCallJob(bullJob(jobFor(), { sent: 1 }), hostWith([OK], log));
    expect(log).toEqual([]);
    expect(outcome).toMatchObject({ status: 'failed', error: { kind: 'transport', outcome: 'unknown' } });
  });

  it("keeps the sent mark in every progress write, and writes a chatty app's progress at most once per interval", async () => {
    const marks: unknown[] = [];
    // 100 notifications at once, then the answer: the first goes out, the rest fall in its interval and are dropped with it.
    const host = await hostSendingProgress(Array.from({ length: 100 }, (_, i) => ({ progress: i + 1, total: 100, message: `step ${i + 1}` })));
    const outcome = await processCallJob(bullJob(jobFor(), 0, marks), host);
    expect(outcome.status).toBe('succeeded');
    expect(marks).toEqual([{ sent: 1 }, { sent: 1, call: { progress: 1, total: 100, message: 'step 1', seq: 1 } }]);
  });

  it("passes on 16,000 characters of an app's progress message, through the job's progress as to the terminal", async () => {
    const marks: unknown[] = [];
    await processCallJob(bullJob(jobFor(), 0, marks), await hostSendingProgress([{ progress: 1, message: 'x'.repeat(1_000_000) }]));
    expect(marks[1]).toEqual({ sent: 1, call: { progress: 1, message: `${'x'.repeat(16_000)}… (984,000 more characters)`, seq: 1 } });
    const heard: string[] = [];
    const host = await hostSendingProgress([{ progress: 1, message: 'short' }, { progress: 2, message: 'y'.repeat(20_000) }]);
    await executeCallJob(jobFor({ sideEffects: false }), host, new AbortController().signal, { onProgress: (progress) => heard.push(progress.message ?? '') });
    expect(heard).toEqual(['short', `${'y'.repeat(16_000)}… (4,000 more characters)`]);
  });

  it('runs such a job again when repeating it is safe', async () => {
    const log: string[] = [];
    const outcome = await processCallJob(bullJob(jobFor({ retrySafe: true }), { sent: 1 }), hostWith([OK], log));
    expect(log).toHaveLength(1);
    expect(outcome.status).toBe('succeeded');
  });
});
