import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { CallAbortReason } from '../../src/apps/call-error.js';
import { AppRegistry } from '../../src/apps/registry.js';
import { executeRun } from '../../src/scheduler/executor.js';
import { Limits } from '../../src/scheduler/limits.js';
import { parseWorkflowText } from '../../src/workflow/load.js';
import { memoryConfig } from '../helpers/memory-config.js';

function setup(workflowText: string, secretValues: string[] = []) {
  const artifacts = mkdtempSync(join(tmpdir(), 'runner-report-end-'));
  const config = memoryConfig(artifacts, { secretValues });
  const apps = new AppRegistry({
    config,
    verdictFile: null,
    connectTransport: () => {
      const server = new McpServer({ name: 'mem', version: '1.2.3' }, { capabilities: { tools: {} } });
      server.registerTool(
        'echo',
        { inputSchema: fromJsonSchema<{ text: string }>({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }), annotations: { readOnlyHint: true, openWorldHint: false } },
        async ({ text }: { text: string }) => ({ content: [{ type: 'text', text: JSON.stringify({ text }) }] }),
      );
      const [client, serverSide] = InMemoryTransport.createLinkedPair();
      void server.connect(serverSide);
      return client;
    },
  });
  const workflow = parseWorkflowText(workflowText, join(artifacts, 'wf.yaml'), config);
  return { config, apps, workflow, limits: new Limits(config) };
}

const CHAIN = 'name: wf\ninputs: { token: { type: string } }\nsteps:\n  - { id: one, uses: mem.echo, with: { text: "${{ inputs.token }}" } }\n  - { id: two, uses: mem.echo, with: { text: "${{ steps.one.outputs.text }}!" } }\n  - { id: three, uses: mem.echo, needs: [one], with: { text: x } }\n';

describe('report.html when a run ends', () => {
  it('is written with the needs and policy reasons the record now keeps, secrets masked', async () => {
    const { config, apps, workflow, limits } = setup(CHAIN, ['hunter2']);
    const record = await executeRun({ workflow, config, apps, limits, inputs: { token: 'hunter2' }, policy: { yes: false, allow: [] } });
    await apps.closeAll();
    expect(record.status).toBe('succeeded');
    // `two` reads steps.one in an expression (an implicit need), `three` names it in `needs`.
    expect(record.steps.map((step) => step.needs)).toEqual([[], ['one'], ['one']]);
    expect(record.steps.map((step) => step.declaredNeeds)).toEqual([[], [], ['one']]);
    expect(record.steps[0]!.policyReason).toBe('read-only');
    const html = readFileSync(join(record.dir, 'report.html'), 'utf8');
    expect(html).toContain('data-step="two" data-status="succeeded"');
    expect(html).toContain('<path d="M');
    expect(html).toMatch(/class="implicit" marker-end="url\(#arrow\)"><title>two reads steps.one \(an implicit need\)<\/title>/);
    expect(html).toContain('<title>three needs one</title>');
    expect(html).not.toContain('hunter2');
    expect(html).toContain('***');
  });

  it('is written for a cancelled run', async () => {
    const { config, apps, workflow, limits } = setup(CHAIN);
    const controller = new AbortController();
    controller.abort(new CallAbortReason('cancelled', 'the run was cancelled'));
    const record = await executeRun({ workflow, config, apps, limits, inputs: { token: 't' }, policy: { yes: false, allow: [] }, signal: controller.signal });
    await apps.closeAll();
    expect(record.status).toBe('cancelled');
    const html = readFileSync(join(record.dir, 'report.html'), 'utf8');
    expect(html).toContain('■ cancelled');
    expect(html).toContain('data-step="one" data-status="cancelled"');
  });

  it('never fails the run: a report that cannot be written is a warning', async () => {
    const { config, apps, workflow, limits } = setup(CHAIN);
    const runId = '20261130-084500-000-beef';
    // A folder where the report should go: the rename onto it fails.
    mkdirSync(join(config.artifacts, 'wf', runId, 'report.html'), { recursive: true });
    const warnings: string[] = [];
    const record = await executeRun({ workflow, config, apps, limits, inputs: { token: 't' }, policy: { yes: false, allow: [] }, runId, onWarning: (message) => warnings.push(message) });
    await apps.closeAll();
    expect(record.status).toBe('succeeded');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`report.html of run ${runId} was not written`);
  });
});
