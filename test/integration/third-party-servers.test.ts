import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, repoRoot, type Workspace } from '../helpers/workspace.js';

// Real MCP servers written by others, each installed from npm as an exact
// devDependency and launched from node_modules (never through npx, so nothing
// is downloaded at test time), each running a small workflow through the CLI.
// The suites run concurrently: most of each test is a server starting up.

const modules = join(repoRoot, 'node_modules');
const memoryServer = join(modules, '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
const echartsServer = join(modules, 'mcp-echarts', 'build', 'index.js');
const gitServer = join(modules, '@cyanheads', 'git-mcp-server', 'dist', 'index.js');

// excel-mcp-server is a Go program: its npm package ships one binary per
// platform inside itself; this is the folder its own launcher.js picks.
const EXCEL_PLATFORMS: Record<string, string> = {
  linux_x64: 'excel-mcp-server_linux_amd64_v1',
  linux_arm64: 'excel-mcp-server_linux_arm64_v8.0',
  darwin_x64: 'excel-mcp-server_darwin_amd64_v1',
  darwin_arm64: 'excel-mcp-server_darwin_arm64_v8.0',
  win32_x64: 'excel-mcp-server_windows_amd64_v1',
  win32_arm64: 'excel-mcp-server_windows_arm64_v8.0',
};
const excelFolder = EXCEL_PLATFORMS[`${process.platform}_${process.arch}`];
const excelBinary = excelFolder && join(modules, '@negokaz', 'excel-mcp-server', 'dist', excelFolder, `excel-mcp-server${process.platform === 'win32' ? '.exe' : ''}`);

const TEST_TIMEOUT_MS = 90_000;

type Step = { id: string; status: string; outputs: any; text: string; files: string[]; error: unknown };

/** Runs `workflow` (YAML text) in the workspace and returns the run record, failing with the CLI's stderr. */
async function runWorkflow(ws: Workspace, workflow: string) {
  const file = ws.write('workflow.yaml', workflow);
  const result = await runInProcess(['--config', ws.config, 'run', file, '--json'], { cwd: ws.dir });
  expect(result.code, result.stderr).toBe(0);
  const record = JSON.parse(result.stdout);
  const step = (id: string): Step => record.steps.find((candidate: Step) => candidate.id === id);
  return { record, step };
}

const allow = (...tools: string[]) => `policy:\n  rules:\n${tools.map((tool) => `    - { match: "${tool}", action: allow }\n`).join('')}`;

describe.concurrent('@modelcontextprotocol/server-memory over stdio', () => {
  it('creates an entity, reads it back in the graph, and keeps it in its memory file', { timeout: TEST_TIMEOUT_MS }, async () => {
    const ws = createWorkspace('');
    const memoryFile = join(ws.dir, 'memory.jsonl');
    // MEMORY_FILE_PATH keeps the graph in the workspace (its default is a file inside node_modules).
    ws.write(
      'runner.config.yaml',
      `artifacts: artifacts\napps:\n  memory:\n    command: node\n    args: [${JSON.stringify(memoryServer)}]\n    env: { MEMORY_FILE_PATH: ${JSON.stringify(memoryFile)} }\n` +
        allow('memory.create_entities', 'memory.read_graph'),
    );
    const { record, step } = await runWorkflow(
      ws,
      [
        'name: remember',
        'steps:',
        '  - id: create',
        '    uses: memory.create_entities',
        '    with:',
        '      entities: [{ name: Ada, entityType: person, observations: ["wrote the first program"] }]',
        '  - { id: graph, uses: memory.read_graph, needs: [create] }',
        '',
      ].join('\n'),
    );
    expect(record.apps.memory.server.name).toBe('memory-server');
    expect(step('graph').outputs).toEqual({
      entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }],
      relations: [],
    });
    expect(readFileSync(memoryFile, 'utf8')).toContain('"name":"Ada"');
  });
});

describe.concurrent('mcp-echarts over stdio', () => {
  it('renders a bar chart as PNG image content, saved as a file of the step', { timeout: TEST_TIMEOUT_MS }, async () => {
    const ws = createWorkspace(`apps:\n  echarts:\n    command: node\n    args: [${JSON.stringify(echartsServer)}]\n` + allow('echarts.generate_bar_chart'));
    const { step } = await runWorkflow(
      ws,
      [
        'name: chart',
        'steps:',
        '  - id: bars',
        '    uses: echarts.generate_bar_chart',
        '    with: { title: Sales, width: 400, height: 300, data: [{ category: Q1, value: 10 }, { category: Q2, value: 20 }] }',
        '',
      ].join('\n'),
    );
    const bars = step('bars');
    expect(bars.files).toHaveLength(1);
    expect(bars.files[0]).toMatch(/bars[\\/]image-0\.png$/);
    const png = readFileSync(bars.files[0]!);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    // The IHDR size keeps the 4:3 of the request (the server renders at a device pixel ratio of its own).
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    expect(width * 300).toBe(height * 400);
    expect(width).toBeGreaterThanOrEqual(400);
  });
});

describe.concurrent('@negokaz/excel-mcp-server (Go) over stdio', () => {
  it('writes cells into a workbook in the workspace and reads them back', { timeout: TEST_TIMEOUT_MS }, async () => {
    // The package ships Go binaries for Linux, macOS and Windows on x64 (and most on arm64): one of them is for this machine.
    expect(excelBinary, `no excel-mcp-server binary for ${process.platform}_${process.arch}`).toBeTruthy();
    const ws = createWorkspace(`apps:\n  excel:\n    command: ${JSON.stringify(excelBinary)}\n` + allow('excel.excel_write_to_sheet', 'excel.excel_read_sheet'));
    // The server edits existing workbooks only: start from an empty one.
    const book = join(ws.dir, 'book.xlsx');
    const empty = new ExcelJS.Workbook();
    empty.addWorksheet('Data');
    await empty.xlsx.writeFile(book);
    const target = `fileAbsolutePath: ${JSON.stringify(book)}, sheetName: Data, range: "A1:B2"`;
    const { record, step } = await runWorkflow(
      ws,
      [
        'name: book',
        'steps:',
        '  - id: write',
        '    uses: excel.excel_write_to_sheet',
        `    with: { ${target}, newSheet: false, values: [[item, qty], [bolts, 42]] }`,
        `  - { id: read, uses: excel.excel_read_sheet, needs: [write], with: { ${target} } }`,
        '',
      ].join('\n'),
    );
    expect(record.apps.excel.server.name).toBe('excel-mcp-server');
    // It answers with an HTML table.
    expect(step('read').text).toContain('<tr><th>2</th><td>bolts</td><td>42</td></tr>');

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(book);
    const sheet = workbook.getWorksheet('Data')!;
    expect([sheet.getCell('A1').value, sheet.getCell('B1').value]).toEqual(['item', 'qty']);
    expect([sheet.getCell('A2').value, sheet.getCell('B2').value]).toEqual(['bolts', 42]);
  });
});

/** A git repository in the workspace with one staged file and one untracked file. */
function createRepository(ws: Workspace): string {
  const repo = join(ws.dir, 'repo');
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
  writeFileSync(join(repo, 'staged.txt'), 'staged\n');
  execFileSync('git', ['add', 'staged.txt'], { cwd: repo });
  writeFileSync(join(repo, 'untracked.txt'), 'untracked\n');
  return repo;
}

const statusWorkflow = (repo: string) => `name: status\nsteps:\n  - { id: status, uses: git.git_status, with: { path: ${JSON.stringify(repo)} } }\n`;

function expectStatusOf(step: Step) {
  expect(step.outputs).toMatchObject({
    success: true,
    currentBranch: 'main',
    isClean: false,
    stagedChanges: { added: ['staged.txt'] },
    untrackedFiles: ['untracked.txt'],
  });
}

describe.concurrent('@cyanheads/git-mcp-server over stdio', () => {
  it('git_status of a repository in the workspace', { timeout: TEST_TIMEOUT_MS }, async () => {
    const ws = createWorkspace('');
    const repo = createRepository(ws);
    // GIT_BASE_DIR keeps the server inside the workspace.
    ws.write(
      'runner.config.yaml',
      `artifacts: artifacts\napps:\n  git:\n    command: node\n    args: [${JSON.stringify(gitServer)}]\n    env: { MCP_TRANSPORT_TYPE: stdio, GIT_BASE_DIR: ${JSON.stringify(ws.dir)} }\n` +
        allow('git.git_status'),
    );
    const { record, step } = await runWorkflow(ws, statusWorkflow(repo));
    expect(record.apps.git.server).toEqual({ name: '@cyanheads/git-mcp-server', version: '2.15.3' });
    expectStatusOf(step('status'));
  });
});

/** A free TCP port on 127.0.0.1. */
function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once 127.0.0.1:port accepts a connection; rejects if `child` exits first. */
async function waitForPort(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`git-mcp-server exited before listening on ${port}:\n${stderr()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
}

describe.concurrent('@cyanheads/git-mcp-server over Streamable HTTP', () => {
  let server: ChildProcess | undefined;
  let url: string;
  const ws = createWorkspace('');

  beforeAll(async () => {
    const port = await findFreePort();
    // Its documented variables, plus MCP_HTTP_MAX_PORT_RETRIES=0 (from its config
    // source) so that a port taken meanwhile fails here instead of moving it to the next.
    // Its logs say nothing under NODE_ENV=test (vitest's) and go through a pretty-printing
    // worker under development, so it runs as production and the test waits for the port.
    server = spawn(process.execPath, [gitServer], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: 'production',
        MCP_TRANSPORT_TYPE: 'http',
        MCP_HTTP_HOST: '127.0.0.1',
        MCP_HTTP_PORT: String(port),
        MCP_HTTP_MAX_PORT_RETRIES: '0',
        GIT_BASE_DIR: ws.dir,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    server.stderr!.on('data', (chunk) => (stderr += chunk));
    await waitForPort(port, server, () => stderr);
    url = `http://127.0.0.1:${port}/mcp`;
  }, TEST_TIMEOUT_MS);
  afterAll(() => {
    server?.kill('SIGKILL');
  });

  it('git_status through a url: app', { timeout: TEST_TIMEOUT_MS }, async () => {
    const repo = createRepository(ws);
    ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  git:\n    url: ${url}\n` + allow('git.git_status'));
    const { record, step } = await runWorkflow(ws, statusWorkflow(repo));
    expect(record.apps.git.server.name).toBe('@cyanheads/git-mcp-server');
    expectStatusOf(step('status'));
    expect(existsSync(join(record.dir, 'status', 'result.json'))).toBe(true);
  });
});
