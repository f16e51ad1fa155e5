import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, repoRoot } from '../helpers/workspace.js';

// server-filesystem replaces the folders it was started with by the client's
// roots. The default roots of an app are the artifacts folder plus every
// existing folder in its args, so the folders the user gave it stay allowed.

const filesystemServer = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

// Two calls in a row: server-filesystem applies the roots after the handshake, asynchronously; the second call surely sees them.
const WORKFLOW =
  'name: wf\nsteps:\n' +
  '  - id: first\n    uses: fs.list_allowed_directories\n' +
  '  - id: allowed\n    uses: fs.list_allowed_directories\n    needs: [first]\n';

async function allowedDirectories(appExtra: string) {
  const ws = createWorkspace('');
  const data = join(ws.dir, 'data');
  const other = join(ws.dir, 'other');
  mkdirSync(data, { recursive: true });
  mkdirSync(other, { recursive: true });
  mkdirSync(ws.artifacts, { recursive: true });
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  fs:\n    command: node\n    args: [${JSON.stringify(filesystemServer)}, data]\n${appExtra}`);
  const workflow = ws.write('wf.yaml', WORKFLOW);
  const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
  expect(result.code, result.stderr).toBe(0);
  const text: string = JSON.parse(result.stdout).steps[1].text;
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
