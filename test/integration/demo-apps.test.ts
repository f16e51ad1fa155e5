// The demo MCP apps (examples/apps) spawned for real and driven by the raw SDK client: what pins the
// SDK's behaviour (both protocol eras, over stdio and HTTP, with the annotations listed) and the apps'
// refusal of paths outside the artifacts folder. What their tools make (images, thumbnails, workbooks
// with formulas and an anchored image) is checked through the runner in run-demo and run-record.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const appScript = (app: 'image' | 'sheet') => join(repo, 'examples/apps', app, 'server.js');
const MODERN = '2026-07-28';

type Hints = [readOnly: boolean, destructive: boolean, idempotent: boolean];
const EXPECTED_HINTS: Record<'image' | 'sheet', Record<string, Hints>> = {
  image: {
    render_text: [false, false, true],
    resize: [false, false, true],
    crop: [false, false, true],
    convert: [false, false, true],
    info: [true, false, true],
    thumbnail: [true, false, true],
  },
  sheet: {
    create_workbook: [false, false, false],
    write_range: [false, true, true],
    read_range: [true, false, true],
    insert_image: [false, false, false],
    add_sheet: [false, false, false],
    delete_sheet: [false, true, false],
    export_csv: [false, false, true],
  },
};

type Era = 'modern' | 'legacy';
type ToolResult = {
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

let root: string;
let outside: string;
const clients: Client[] = [];

function newClient(era: Era): Client {
  const client = new Client(
    { name: 'demo-apps-test', version: '0.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {},
  );
  clients.push(client);
  return client;
}

async function connectStdio(app: 'image' | 'sheet', era: Era): Promise<Client> {
  const client = newClient(era);
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [appScript(app), '--root', root], stderr: 'inherit' }),
  );
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

// Calls a tool that must succeed and returns its structuredContent, checked against its text twin.
async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const result = await call(client, name, args);
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  const text = result.content.find((block) => block.type === 'text')?.text;
  expect(JSON.parse(text ?? 'null')).toEqual(result.structuredContent);
  return result.structuredContent!;
}

async function expectListedTools(client: Client, app: 'image' | 'sheet') {
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(EXPECTED_HINTS[app]).sort());
  for (const tool of tools) {
    const [readOnlyHint, destructiveHint, idempotentHint] = EXPECTED_HINTS[app][tool.name];
    expect(tool.annotations, tool.name).toEqual({ readOnlyHint, destructiveHint, idempotentHint, openWorldHint: false });
    expect(tool.title, tool.name).toBeTruthy();
    expect(tool.description, tool.name).toBeTruthy();
    expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
    expect(tool.inputSchema.required?.length, tool.name).toBeGreaterThan(0);
    expect(tool.outputSchema?.type, tool.name).toBe('object');
  }
}

let image: { modern: Client; legacy: Client };
let sheet: { modern: Client; legacy: Client };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'runner-demo-apps-'));
  outside = await mkdtemp(join(tmpdir(), 'runner-demo-outside-'));
  const [imageModern, imageLegacy, sheetModern, sheetLegacy] = await Promise.all([
    connectStdio('image', 'modern'),
    connectStdio('image', 'legacy'),
    connectStdio('sheet', 'modern'),
    connectStdio('sheet', 'legacy'),
  ]);
  image = { modern: imageModern, legacy: imageLegacy };
  sheet = { modern: sheetModern, legacy: sheetLegacy };
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('demo apps over stdio', () => {
  it('negotiate 2026-07-28 in auto mode and a 2025 version by default, listing honest annotations', async () => {
    expect(image.modern.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(sheet.modern.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(image.legacy.getNegotiatedProtocolVersion()).toMatch(/^2025-/);
    expect(sheet.legacy.getNegotiatedProtocolVersion()).toMatch(/^2025-/);
    for (const era of ['modern', 'legacy'] as const) {
      await expectListedTools(image[era], 'image');
      await expectListedTools(sheet[era], 'sheet');
    }
  });

  it('refuses paths outside the artifacts root as tool errors', async () => {
    await writeFile(join(outside, 'secret.png'), 'not for you');
    await symlink(outside, join(root, 'escape'));
    const attempts: Array<[Client, string, Record<string, unknown>]> = [
      [image.modern, 'info', { path: join(outside, 'secret.png') }],
      [image.legacy, 'render_text', { text: 'x', out: '../escaped.png' }],
      [image.modern, 'render_text', { text: 'x', out: 'escape/through-link.png' }],
      [sheet.modern, 'create_workbook', { path: '../../escaped.xlsx' }],
    ];
    for (const [client, name, args] of attempts) {
      const result = await call(client, name, args);
      expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(result.content[0].text).toMatch(/is outside the artifacts folder/);
    }
    const missing = await call(image.modern, 'info', { path: 'missing.png' });
    expect(missing).toMatchObject({ isError: true, content: [{ type: 'text', text: 'file not found: missing.png' }] });
  });
});

describe('demo apps over Streamable HTTP', () => {
  let child: ChildProcessByStdio<null, Readable, Readable> | undefined;

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((done) => child!.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('serves both eras on --http 0 and prints the port it bound', async () => {
    child = spawn(process.execPath, [appScript('sheet'), '--root', root, '--http', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const url = await new Promise<string>((resolveUrl, rejectUrl) => {
      let stderr = '';
      const timer = setTimeout(() => rejectUrl(new Error(`no listening line on stderr: ${stderr}`)), 10_000);
      child!.stderr.on('data', (chunk) => {
        stderr += chunk;
        const match = /^listening on (http:\/\/127\.0\.0\.1:(\d+)\/mcp)$/m.exec(stderr);
        if (match) {
          clearTimeout(timer);
          resolveUrl(match[1]);
        }
      });
      child!.once('exit', (code) => rejectUrl(new Error(`sheet app exited with ${code}: ${stderr}`)));
    });
    expect(Number(new URL(url).port)).toBeGreaterThan(0);

    for (const era of ['modern', 'legacy'] as const) {
      const client = newClient(era);
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      expect(client.getNegotiatedProtocolVersion()).toMatch(era === 'modern' ? /^2026-07-28$/ : /^2025-/);
      const created = await callOk(client, 'create_workbook', { path: `http-${era}.xlsx`, sheet: 'Data' });
      expect(created).toEqual({ path: join(root, `http-${era}.xlsx`), sheets: ['Data'] });
      await client.close();
    }
    expect(stdout).toBe('');
  });
});
