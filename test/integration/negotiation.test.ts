import { describe, expect, it } from 'vitest';
import { startLegacySseFixture, startStreamableFixture, type ProbeAnswer } from '../helpers/mcp-http-fixtures.js';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace } from '../helpers/workspace.js';

// Negotiation never makes a reachable server unreachable: a `server/discover`
// probe answered with an HTTP error, garbage or nothing falls back to
// `initialize` once; `protocol:` pins an era and skips the probe; legacy
// HTTP+SSE servers work with `transport: sse`. Real servers over loopback,
// the CLI.

const ECHO = 'name: wf\nsteps:\n  - id: hello\n    uses: remote.echo\n    with: { text: hi }\n';

async function runEcho(appYaml: string) {
  const ws = createWorkspace(`apps:\n  remote:\n${appYaml}`);
  const workflow = ws.write('wf.yaml', ECHO);
  const run = async () => {
    const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
    return { ...result, record: JSON.parse(result.stdout || '{}') };
  };
  return { ws, run };
}

describe('a 2025 server that does not answer the probe properly', () => {
  it.each<[ProbeAnswer, string]>([
    ['http-500', 'answers it with HTTP 500 (git-mcp-server)'],
    ['garbage', 'answers it with garbage'],
  ])('%s: it %s, and is reached with initialize, once; the verdict is remembered', async (answer) => {
    const server = await startStreamableFixture(answer);
    const { run } = await runEcho(`    url: ${server.url}\n`);
    const first = await run();
    expect(first.stderr).not.toContain('error');
    expect(first.code).toBe(0);
    expect(first.record.steps[0].text).toBe('hi');
    expect(first.record.apps.remote.protocolVersion).toBe('2025-11-25');
    expect(server.methods.slice(0, 2)).toEqual(['server/discover', 'initialize']);
    expect(server.methods.filter((method) => method === 'server/discover')).toHaveLength(1);

    // The legacy verdict is remembered: the next run does not probe again.
    server.methods.length = 0;
    const second = await run();
    expect(second.code).toBe(0);
    expect(server.methods[0]).toBe('initialize');
    expect(server.methods).not.toContain('server/discover');
  });

  it('never answers it: within a short connect-timeout, initialize still follows and works', async () => {
    const server = await startStreamableFixture('silent');
    const { run } = await runEcho(`    url: ${server.url}\n    connect-timeout: 1s\n`);
    const result = await run();
    expect(result.code).toBe(0);
    expect(result.record.steps[0].text).toBe('hi');
    expect(result.record.apps.remote.protocolVersion).toBe('2025-11-25');
    expect(server.methods.slice(0, 2)).toEqual(['server/discover', 'initialize']);
  });
});

describe('a 2026 server', () => {
  it('is reached with server/discover, without initialize', async () => {
    const server = await startStreamableFixture('serve');
    const { run } = await runEcho(`    url: ${server.url}\n`);
    const result = await run();
    expect(result.code).toBe(0);
    expect(result.record.apps.remote.protocolVersion).toBe('2026-07-28');
    expect(server.methods).toContain('server/discover');
    expect(server.methods).not.toContain('initialize');
  });
});

describe('protocol: pins an era', () => {
  it('2025-11-25: no probe reaches the server, only initialize', async () => {
    const server = await startStreamableFixture('http-500');
    const { run } = await runEcho(`    url: ${server.url}\n    protocol: 2025-11-25\n`);
    const result = await run();
    expect(result.code).toBe(0);
    expect(result.record.apps.remote.protocolVersion).toBe('2025-11-25');
    expect(server.methods[0]).toBe('initialize');
    expect(server.methods).not.toContain('server/discover');
  });

  it('2025-06-18: initialize offers that version alone', async () => {
    const server = await startStreamableFixture('serve');
    const { run } = await runEcho(`    url: ${server.url}\n    protocol: 2025-06-18\n`);
    const result = await run();
    expect(result.code).toBe(0);
    expect(result.record.apps.remote.protocolVersion).toBe('2025-06-18');
    expect(server.methods).not.toContain('server/discover');
  });

  it('2026-07-28: no fallback to initialize when the server does not offer it', async () => {
    const server = await startStreamableFixture('http-500');
    const { run } = await runEcho(`    url: ${server.url}\n    protocol: 2026-07-28\n`);
    const result = await run();
    expect(result.code).toBe(1);
    expect(result.record.steps[0].error).toMatchObject({ kind: 'unavailable', outcome: 'not-sent' });
    expect(result.record.steps[0].error.message).toContain('HTTP 500');
    expect(server.methods).toEqual(['server/discover']);
  });
});

describe('a legacy HTTP+SSE server', () => {
  it('is reached with transport: sse, with initialize and no probe', async () => {
    const server = await startLegacySseFixture();
    const { run } = await runEcho(`    url: ${server.url}\n    transport: sse\n`);
    const result = await run();
    expect(result.stderr).not.toContain('error');
    expect(result.code).toBe(0);
    expect(result.record.steps[0].text).toBe('hi');
    expect(result.record.apps.remote).toMatchObject({ protocolVersion: '2025-11-25', server: { name: 'legacy-sse' } });
    expect(server.methods[0]).toBe('initialize');
    expect(server.methods).not.toContain('server/discover');
  });

  it('is reached from imported entries: `type: sse`, and a url ending in /sse without a type', async () => {
    const server = await startLegacySseFixture();
    const ws = createWorkspace('import: [.mcp.json, cursor.json]\n');
    ws.write('.mcp.json', JSON.stringify({ mcpServers: { typed: { type: 'sse', url: server.url } } }));
    ws.write('cursor.json', JSON.stringify({ mcpServers: { guessed: { url: server.url } } }));
    const workflow = ws.write(
      'wf.yaml',
      'name: wf\nsteps:\n  - id: a\n    uses: typed.echo\n    with: { text: one }\n  - id: b\n    uses: guessed.echo\n    with: { text: two }\n',
    );
    const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record.steps.map((step: { text: string }) => step.text)).toEqual(['one', 'two']);
    expect(server.methods.filter((method) => method === 'initialize')).toHaveLength(2);
  });
});
