import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, everythingApp, repoRoot, sheetApp } from '../helpers/workspace.js';

describe('an app over Streamable HTTP', () => {
  let server: ChildProcess;
  let url: string;
  const root = createWorkspace('').artifacts;

  beforeAll(async () => {
    server = spawn(process.execPath, [sheetApp, '--http', '0', '--root', root], { stdio: ['ignore', 'ignore', 'pipe'] });
    url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      server.stderr!.on('data', (chunk) => {
        seen += chunk;
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen);
        if (match) resolve(match[1]!);
      });
      server.on('exit', (code) => reject(new Error(`sheet app exited ${code}: ${seen}`)));
    });
  });
  afterAll(() => {
    server?.kill('SIGKILL');
  });

  it('runs workflows/quote-over-http.yaml against it', async () => {
    // The same artifacts folder as the server's root, so the runner's absolute paths are inside it.
    const ws = createWorkspace('');
    const config = ws.write('runner.config.yaml', `artifacts: ${JSON.stringify(root)}\napps:\n  sheet_http:\n    url: ${url}\npolicy:\n  rules:\n    - { match: "sheet_http.write_range", action: allow }\n`);
    const result = await runInProcess(['--config', config, 'run', join(repoRoot, 'workflows', 'quote-over-http.yaml'), '--json'], { cwd: ws.dir });
    expect(result.stderr).toContain('readback succeeded');
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record.apps.sheet_http.protocolVersion).toBe('2026-07-28');
    expect(record.apps.sheet_http.server.name).toBe('sheet');
    const csv = readFileSync(join(record.dir, 'quote.csv'), 'utf8');
    expect(csv).toContain('Amount,1250');
    const readback = record.steps.find((step: { id: string }) => step.id === 'readback');
    expect(readback.outputs.values[2]).toEqual(['Amount', 1250]);
  });
});

describe('an HTTP app that is not running', () => {
  it('fails its steps as unavailable, saying where it looked', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const ws = createWorkspace(`apps:\n  remote:\n    url: http://127.0.0.1:${port}/mcp\n`);
    const workflow = ws.write('wf.yaml', 'name: wf\nsteps:\n  - id: a\n    uses: remote.anything\n');
    const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
    expect(result.code).toBe(1);
    const error = JSON.parse(result.stdout).steps[0].error;
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain(`could not be reached at http://127.0.0.1:${port}/mcp`);
    expect(error.message).toContain('ECONNREFUSED');
  });
});

describe('interop with @modelcontextprotocol/server-everything (2025 protocol, not ours)', () => {
  it('saves its image content and a linked resource as files', async () => {
    // stop-timeout: the reference server does not exit when its stdin closes, and how it is stopped is not the point here.
    const ws = createWorkspace(`apps:\n  everything:\n    command: node\n    args: [${JSON.stringify(everythingApp)}, stdio]\n    stop-timeout: 200ms\npolicy:\n  open-world: allow\n  rules:\n    - { match: "everything.*", action: allow }\n`);
    const workflow = ws.write(
      'workflows/everything.yaml',
      [
        'name: everything',
        'steps:',
        '  - id: tiny',
        '    uses: everything.get-tiny-image',
        '  - id: links',
        '    uses: everything.get-resource-links',
        '    with: { count: 2 }',
        '  - id: echo',
        '    uses: everything.echo',
        '    with: { message: "${{ steps.tiny.files[0] }}" }',
        '',
      ].join('\n'),
    );
    const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
    expect(result.stderr).toContain('echo succeeded');
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record.apps.everything.protocolVersion).toMatch(/^2025-/);
    const tiny = record.steps.find((step: { id: string }) => step.id === 'tiny');
    expect(tiny.files).toHaveLength(1);
    expect(tiny.files[0]).toMatch(/tiny[/\\]image-\d+\.png$/);
    expect(readFileSync(tiny.files[0]).subarray(1, 4).toString()).toBe('PNG');
    const links = record.steps.find((step: { id: string }) => step.id === 'links');
    expect(links.files.length).toBeGreaterThanOrEqual(2);
    for (const file of links.files) expect(file.startsWith(join(record.dir, 'links'))).toBe(true);
    const echo = record.steps.find((step: { id: string }) => step.id === 'echo');
    expect(echo.text).toContain(tiny.files[0]);
  });
});
