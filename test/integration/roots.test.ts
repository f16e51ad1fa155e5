import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, repoRoot, faultyArgs } from '../helpers/workspace.js';

// server-filesystem replaces the folders it was started with by the client's
// roots. The default roots of an app are the artifacts folder plus every
// existing folder in its args, so the folders the user gave it stay allowed.

const filesystemServer = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

// server-filesystem applies the roots after the handshake, asynchronously, and says so on stderr (which the
// runner keeps in the run's logs/fs.log). The second call waits, on a gate of the faulty app, until it has.
const WORKFLOW =
  'name: wf\nsteps:\n' +
  '  - id: first\n    uses: fs.list_allowed_directories\n' +
  '  - id: settled\n    uses: faulty.gate\n    needs: [first]\n    with: { path: "${{ inputs.gate }}" }\n' +
  '  - id: allowed\n    uses: fs.list_allowed_directories\n    needs: [settled]\n' +
  'inputs:\n  gate: { type: string }\n';

/** What server-filesystem writes once it has settled its directories, with roots or without. */
const SETTLED = /Updated allowed directories from MCP roots|Client does not support MCP Roots/;

function fsLog(artifacts: string): string {
  const runs = join(artifacts, 'wf');
  if (!existsSync(runs)) return '';
  return readdirSync(runs)
    .map((run) => join(runs, run, 'logs', 'fs.log'))
    .filter((file) => existsSync(file))
    .map((file) => readFileSync(file, 'utf8'))
    .join('');
}

async function allowedDirectories(appExtra: string) {
  const ws = createWorkspace('');
  const data = join(ws.dir, 'data');
  const other = join(ws.dir, 'other');
  const gate = join(ws.dir, 'settled.gate');
  mkdirSync(data, { recursive: true });
  mkdirSync(other, { recursive: true });
  mkdirSync(ws.artifacts, { recursive: true });
  ws.write(
    'runner.config.yaml',
    `artifacts: artifacts\napps:\n  fs:\n    command: node\n    args: [${JSON.stringify(filesystemServer)}, data]\n${appExtra}` +
      `  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n`,
  );
  const workflow = ws.write('wf.yaml', WORKFLOW);
  const running = runInProcess(['--config', ws.config, 'run', workflow, '--json', '-i', `gate=${gate}`], { cwd: ws.dir });
  await expect.poll(() => fsLog(ws.artifacts), { timeout: 20_000, interval: 20 }).toMatch(SETTLED);
  writeFileSync(gate, '');
  const result = await running;
  expect(result.code, result.stderr).toBe(0);
  const text: string = JSON.parse(result.stdout).steps[2].text;
  return { ws, data, other, listed: text.split('\n').slice(1).sort() };
}

describe('roots of @modelcontextprotocol/server-filesystem', () => {
  it('by default: the artifacts folder and the folder given in args, which the server keeps', async () => {
    const { ws, data, listed } = await allowedDirectories('');
    expect(listed).toEqual([ws.artifacts, data].sort());
  });

  it('roots: false: no roots capability, so the server keeps its args alone', async () => {
    const { data, listed } = await allowedDirectories('    roots: false\n');
    expect(listed).toEqual([data]);
  });

  it('explicit roots replace the folders of the args', async () => {
    const { other, listed } = await allowedDirectories('    roots: [other]\n');
    expect(listed).toEqual([other]);
  });
});
