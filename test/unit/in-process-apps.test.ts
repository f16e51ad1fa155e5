import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { InProcessApps } from '../../src/apps/in-process-apps.js';
import { runCli } from '../../src/cli/program.js';
import { createWorkspace, faultyArgs } from '../helpers/workspace.js';

/** An app `mem` whose command would leave `marker` if it ever ran, served in this process instead; `faulty` starts as configured. */
function workspace() {
  const ws = createWorkspace('');
  const marker = join(ws.dir, 'mem-started');
  const memArgs = ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'started')`];
  ws.write(
    'runner.config.yaml',
    `artifacts: artifacts\napps:\n  mem:\n    command: node\n    args: ${JSON.stringify(memArgs)}\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n`,
  );
  const connected: string[] = [];
  const apps: InProcessApps = {
    serves: (app) => app.transport === 'stdio' && app.args.includes(memArgs[1]!),
    connect: (_app, { artifacts }) => {
      connected.push(artifacts);
      const server = new McpServer({ name: 'mem', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.registerTool(
        'shout',
        { inputSchema: fromJsonSchema<{ text: string }>({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }), annotations: { readOnlyHint: true, openWorldHint: false } },
        async ({ text }: { text: string }) => ({ content: [{ type: 'text', text: text.toUpperCase() }] }),
      );
      const [client, serverSide] = InMemoryTransport.createLinkedPair();
      void server.connect(serverSide);
      return client;
    },
  };
  return { ws, marker, apps, connected };
}

async function run(args: string[], cwd: string, inProcessApps: InProcessApps) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    stdin: Readable.from([]),
    stderrIsTTY: false,
    cwd,
    env: { ...process.env },
    inProcessApps,
  });
  return { code, stdout, stderr };
}

describe('apps served in the CLI process (CliIO.inProcessApps)', () => {
  it('runs a workflow on a served app without ever starting its command, and starts the others as configured', async () => {
    const { ws, marker, apps, connected } = workspace();
    const workflow = ws.write('wf.yaml', 'name: wf\nsteps:\n  - id: a\n    uses: mem.shout\n    with: { text: hi }\n  - id: b\n    uses: faulty.echo\n    with: { text: "${{ steps.a.text }}" }\n');
    const result = await run(['--config', ws.config, 'run', workflow, '--json'], ws.dir, apps);
    expect(result.code, result.stderr).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record.steps.map((step: { text: string }) => step.text)).toEqual(['HI', 'HI']);
    expect(record.apps.mem.server).toEqual({ name: 'mem', version: '1.0.0' });
    // Each connection learns the artifacts folder, as a started app does from RUNNER_ARTIFACTS.
    expect(connected.length).toBeGreaterThan(0);
    expect(new Set(connected)).toEqual(new Set([ws.artifacts]));
    expect(existsSync(marker)).toBe(false);
  });

  it('serves the commands that open the composition, such as `tools`', async () => {
    const { ws, marker, apps } = workspace();
    const result = await run(['--config', ws.config, 'tools', 'mem', '--json'], ws.dir, apps);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(result.stdout))).toContain('shout');
    expect(existsSync(marker)).toBe(false);
  });
});
