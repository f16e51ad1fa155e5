import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer, fromJsonSchema, type JsonSchemaType } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { AppRegistry } from '../../src/apps/registry.js';
import type { RunnerConfig } from '../../src/config/types.js';
import type { ApprovalRequest } from '../../src/scheduler/events.js';
import { executeRun } from '../../src/scheduler/executor.js';
import { Limits } from '../../src/scheduler/limits.js';
import { assembleRecord, openRunStore } from '../../src/store/run-history.js';
import { parseWorkflowText } from '../../src/workflow/load.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { memoryConfig } from '../helpers/memory-config.js';

/**
 * An in-process MCP server with a few honest tools, and a log of the calls it served. With a clock,
 * also `slow` ({ ms, progressEveryMs? }): it waits on that clock, sending progress that often.
 */
function createServer(calls: string[], clock?: FakeClock) {
  const server = new McpServer({ name: 'mem', version: '1.2.3' }, { capabilities: { tools: {} } });
  const schema = <T,>(properties: Record<string, JsonSchemaType>, required: string[] = []) =>
    fromJsonSchema<T>({ type: 'object', properties, required, additionalProperties: false });
  if (clock) {
    server.registerTool(
      'slow',
      { inputSchema: schema<{ ms: number; progressEveryMs?: number }>({ ms: { type: 'number' }, progressEveryMs: { type: 'number' } }, ['ms']), annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false } },
      async ({ ms, progressEveryMs }: { ms: number; progressEveryMs?: number }, ctx) => {
        const progressToken = ctx.mcpReq._meta?.progressToken;
        const every = progressEveryMs && progressToken !== undefined ? progressEveryMs : ms;
        for (let waited = 0; waited < ms; ) {
          const step = Math.min(every, ms - waited);
          await clock.sleep(step, ctx.mcpReq.signal);
          waited += step;
          if (every < ms) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: progressToken!, progress: waited, total: ms } });
        }
        calls.push(`slow ${ms}`);
        return { content: [{ type: 'text', text: `slept ${ms}` }] };
      },
    );
  }
  server.registerTool(
    'add',
    { inputSchema: schema<{ a: number; b: number }>({ a: { type: 'number' }, b: { type: 'number' } }, ['a', 'b']), annotations: { readOnlyHint: true, openWorldHint: false } },
    async ({ a, b }: { a: number; b: number }) => {
      calls.push(`add ${a} ${b}`);
      return { content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }] };
    },
  );
  server.registerTool(
    'drop',
    { inputSchema: schema<{ table: string }>({ table: { type: 'string' } }, ['table']), annotations: { destructiveHint: true, openWorldHint: false } },
    async ({ table }: { table: string }) => {
      calls.push(`drop ${table}`);
      if (table === 'missing') return { content: [{ type: 'text', text: 'no such table' }], isError: true };
      return { content: [{ type: 'text', text: `dropped ${table}` }] };
    },
  );
  return server;
}

function setup(workflowText: string, policy: Partial<RunnerConfig['policy']> = {}, clock?: FakeClock) {
  const artifacts = mkdtempSync(join(tmpdir(), 'runner-exec-'));
  const config = memoryConfig(artifacts, { policy });
  const calls: string[] = [];
  const apps = new AppRegistry({
    config,
    verdictFile: null,
    connectTransport: () => {
      const [client, server] = InMemoryTransport.createLinkedPair();
      void createServer(calls, clock).connect(server);
      return client;
    },
  });
  const workflow = parseWorkflowText(workflowText, join(artifacts, 'wf.yaml'), config);
  return { config, apps, workflow, calls, limits: new Limits(config) };
}

describe('executeRun with an in-memory MCP server', () => {
  it('chains outputs between steps, keeping the type of a lone expression', async () => {
    const { config, apps, workflow, calls, limits } = setup(
      'name: wf\nsteps:\n  - id: one\n    uses: mem.add\n    with: { a: 1, b: 2 }\n  - id: two\n    uses: mem.add\n    with: { a: "${{ steps.one.outputs.sum }}", b: 10 }\n',
    );
    const record = await executeRun({ workflow, config, apps, limits, inputs: {}, policy: { yes: false, allow: [] } });
    await apps.closeAll();
    expect(record.status).toBe('succeeded');
    expect(record.steps[1]!.outputs).toEqual({ sum: 13 });
    expect(calls).toEqual(['add 1 2', 'add 3 10']);
    expect(record.apps.mem!.server).toEqual({ name: 'mem', version: '1.2.3' });
    const stored = JSON.parse(readFileSync(join(record.dir, 'two', 'result.json'), 'utf8'));
    expect(stored.content[0].text).toBe('{"sum":13}');
  });

  it('asks the approver about a destructive tool and sends nothing when it says no', async () => {
    const { config, apps, workflow, calls, limits } = setup('name: wf\nsteps:\n  - id: d\n    uses: mem.drop\n    with: { table: users }\n');
    const asked: ApprovalRequest[] = [];
    const record = await executeRun({
      workflow,
      config,
      apps,
      limits,
      inputs: {},
      policy: { yes: false, allow: [], approver: async (request) => (asked.push(request), false) },
    });
    await apps.closeAll();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ app: 'mem', tool: 'drop', args: { table: 'users' }, reason: 'destructive' });
    expect(record.steps[0]).toMatchObject({ status: 'denied', policy: 'deny', error: { kind: 'policy' } });
    expect(calls).toEqual([]);
  });

  it('skips dependents of a failed step and runs an `if: always()` one', async () => {
    const { config, apps, workflow, limits } = setup(
      [
        'name: wf',
        'steps:',
        '  - id: bad',
        '    uses: mem.add',
        '    with: { a: "not a number", b: 1 }',
        '  - id: next',
        '    uses: mem.add',
        '    needs: [bad]',
        '    with: { a: 1, b: 1 }',
        '  - id: cleanup',
        '    uses: mem.add',
        '    needs: [bad]',
        '    if: always()',
        '    with: { a: 2, b: 2 }',
        '',
      ].join('\n'),
    );
    const record = await executeRun({ workflow, config, apps, limits, inputs: {}, policy: { yes: false, allow: [] } });
    await apps.closeAll();
    expect(record.steps.map((step) => [step.id, step.status])).toEqual([
      ['bad', 'failed'],
      ['next', 'skipped'],
      ['cleanup', 'succeeded'],
    ]);
    expect(record.steps[0]!.error).toMatchObject({ kind: 'input', outcome: 'not-sent' });
    expect(record.status).toBe('failed');
  });
});

describe('the call journal', () => {
  /** Runs one `mem.drop` step (side effects: journaled) and notes what the store held right after each write that settled a call. */
  async function runJournaled(table: string) {
    const { config, apps, workflow, calls, limits } = setup(`name: wf\nsteps:\n  - id: d\n    uses: mem.drop\n    with: { table: ${table} }\n`);
    const store = openRunStore(config.artifacts);
    // A crash at any moment after such a write finds this in the store.
    const afterSettle: string[] = [];
    const write = store.write.bind(store);
    store.write = (changes, options) => {
      write(changes, options);
      for (const settled of changes.settled ?? []) {
        const steps = assembleRecord(store.getRun(changes.runId)!).steps;
        afterSettle.push(`${settled.outcome}: ${steps.map((step) => `${step.id} ${step.status}`).join(', ')}`);
      }
    };
    const record = await executeRun({ workflow, config, apps, limits, inputs: {}, policy: { yes: true, allow: [] }, store });
    await apps.closeAll();
    store.close();
    return { record, calls, afterSettle };
  }

  it('settles a side-effecting call in the same write that records its step as succeeded', async () => {
    const { record, calls, afterSettle } = await runJournaled('users');
    expect(record.status).toBe('succeeded');
    expect(calls).toEqual(['drop users']);
    expect(afterSettle).toEqual(['succeeded: d succeeded']);
  });

  it('settles a failed side-effecting call in the same write that records its step as failed', async () => {
    const { record, calls, afterSettle } = await runJournaled('missing');
    expect(record.steps[0]).toMatchObject({ status: 'failed', error: { kind: 'tool' } });
    expect(calls).toEqual(['drop missing']);
    expect(afterSettle).toEqual(['failed: d failed']);
  });
});

describe('tool discovery', () => {
  it('is cached per connection and refreshed by notifications/tools/list_changed', async () => {
    const artifacts = mkdtempSync(join(tmpdir(), 'runner-list-'));
    const config = setup('name: wf\nsteps:\n  - id: a\n    uses: mem.add\n    with: { a: 1, b: 1 }\n').config;
    let server: McpServer | undefined;
    const apps = new AppRegistry({
      config: { ...config, artifacts },
      verdictFile: null,
      connectTransport: () => {
        const [client, serverSide] = InMemoryTransport.createLinkedPair();
        server = createServer([]);
        void server.connect(serverSide);
        return client;
      },
    });
    const connection = await apps.get('mem');
    expect((await connection.listTools()).map((tool) => tool.name).sort()).toEqual(['add', 'drop']);
    expect(await connection.getTool('late')).toBeUndefined();
    server!.registerTool('late', { annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'here' }] }));
    await expect.poll(async () => (await connection.getTool('late'))?.name, { timeout: 3000 }).toBe('late');
    await apps.closeAll();
  });

  it('a change notice marks the list stale at once; it is read again once, at the next lookup, however many notices came', async () => {
    const artifacts = mkdtempSync(join(tmpdir(), 'runner-list-'));
    const config = setup('name: wf\nsteps:\n  - id: a\n    uses: mem.add\n    with: { a: 1, b: 1 }\n').config;
    let lists = 0;
    let server: McpServer | undefined;
    let tools = [{ name: 'first', inputSchema: { type: 'object' as const } }];
    const apps = new AppRegistry({
      config: { ...config, artifacts },
      verdictFile: null,
      connectTransport: () => {
        const [client, serverSide] = InMemoryTransport.createLinkedPair();
        server = new McpServer({ name: 'mem', version: '1.2.3' }, { capabilities: { tools: { listChanged: true } } });
        server.server.setRequestHandler('tools/list', () => {
          lists++;
          return { tools };
        });
        void server.connect(serverSide);
        return client;
      },
    });
    const connection = await apps.get('mem');
    expect((await connection.getTool('first'))?.name).toBe('first');
    const listedAtStart = lists;
    tools = [{ name: 'second', inputSchema: { type: 'object' as const } }];
    for (let i = 0; i < 200; i++) await server!.server.notification({ method: 'notifications/tools/list_changed' });
    // A ping answered means the client has handled every message sent before it: the notices.
    await server!.server.ping();
    expect(connection.cachedTool('first')).toBeUndefined();
    expect(await connection.getTool('first')).toBeUndefined();
    expect((await connection.getTool('second'))?.name).toBe('second');
    expect(lists - listedAtStart).toBe(1);
    await apps.closeAll();
  });
});

describe('executeRun on the fake clock', () => {
  /** Runs the workflow to its end, moving fake time on 50 ms at a time while it goes. */
  async function runOnFakeTime(workflowText: string) {
    const clock = new FakeClock('2026-01-01T00:00:00Z');
    const { config, apps, workflow, calls, limits } = setup(workflowText, {}, clock);
    let finished = false;
    const running = executeRun({ workflow, config, apps, limits, inputs: {}, policy: { yes: false, allow: [] }, clock }).finally(() => (finished = true));
    for (let i = 0; i < 2_000 && !finished; i++) await clock.advance(50);
    const record = await running;
    await apps.closeAll();
    return { record, calls, step: (id: string) => record.steps.find((entry) => entry.id === id)! };
  }

  it('idle-timeout is reset by progress notifications; without progress it expires', async () => {
    const { record, calls, step } = await runOnFakeTime(
      [
        'name: wf',
        'steps:',
        '  - id: busy',
        '    uses: mem.slow',
        '    with: { ms: 1200, progressEveryMs: 100 }',
        '    idle-timeout: 500ms',
        '    timeout: 10s',
        '  - id: silent',
        '    uses: mem.slow',
        '    needs: [busy]',
        '    with: { ms: 3000 }',
        '    idle-timeout: 500ms',
        '    continue-on-error: true',
        '',
      ].join('\n'),
    );
    // 1200 ms without a gap of 500 ms between progress notifications: never idle that long.
    expect(step('busy').status).toBe('succeeded');
    expect(step('silent')).toMatchObject({ status: 'failed', error: { kind: 'timeout' } });
    expect(step('silent').error!.message).toContain('idle-timeout');
    // It expired at 500 ms of silence, long before the tool would have answered.
    expect(Date.parse(step('silent').endedAt!) - Date.parse(step('silent').startedAt!)).toBeLessThan(1000);
    expect(calls).toEqual(['slow 1200']);
    expect(record.status).toBe('succeeded'); // the only failure was tolerated
  });

  it('a step timeout ends a call that keeps reporting progress', async () => {
    const { step } = await runOnFakeTime('name: wf\nsteps:\n  - id: long\n    uses: mem.slow\n    with: { ms: 5000, progressEveryMs: 100 }\n    idle-timeout: 500ms\n    timeout: 2s\n');
    expect(step('long')).toMatchObject({ status: 'failed', error: { kind: 'timeout' } });
    expect(step('long').error!.message).not.toContain('idle-timeout');
  });
});
