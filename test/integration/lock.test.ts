import { cpSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { startServe, type Event } from '../helpers/serve.js';
import { shiftingWorkspace, type ShiftingTool, type ShiftingWorkspace } from '../helpers/shifting-workspace.js';
import { repoRoot, type Workspace } from '../helpers/workspace.js';

type FixtureTool = ShiftingTool;

const READ: FixtureTool = {
  name: 'read',
  description: 'Reads a note',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  annotations: { readOnlyHint: true, openWorldHint: false },
};
const WRITE: FixtureTool = {
  name: 'write',
  description: 'Writes a note',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
};
const UNUSED: FixtureTool = { name: 'unused', description: 'No workflow calls this', inputSchema: { type: 'object', properties: {} } };

const WORKFLOW = [
  'name: notes',
  'steps:',
  '  - id: read',
  '    uses: notes.read',
  '    with: { id: "a" }',
  '  - id: write',
  '    uses: notes.write',
  '    with: { text: "${{ steps.read.text }}" }',
  '',
].join('\n');

/** A workspace whose app `notes` lists READ, WRITE and UNUSED until setTools changes them, with the notes workflow. */
function lockWorkspace(): ShiftingWorkspace {
  const ws = shiftingWorkspace([READ, WRITE, UNUSED], 'policy: { read-only: allow, destructive: allow, other: allow, open-world: allow }\n');
  ws.write('workflows/notes.yaml', WORKFLOW);
  return ws;
}

const runRecords = async (ws: Workspace) => JSON.parse((await runInProcess(['runs', '--json'], { cwd: ws.dir })).stdout) as unknown[];
const run = (ws: Workspace) => runInProcess(['run', 'workflows/notes.yaml'], { cwd: ws.dir });
const lock = (ws: Workspace, ...args: string[]) => runInProcess(['lock', ...args], { cwd: ws.dir });

// Each test runs the CLI several times, each starting the fixture app: slow on a loaded machine.
// Each has its own workspace and app processes, and mostly waits on them: they run at once.
describe.concurrent('runner.lock', { timeout: 120_000 }, () => {
  it('without a lockfile nothing is checked; runner lock writes one, sorted, of the tools the workflows call', async ({ expect }) => {
    const ws = lockWorkspace();
    ws.setTools([READ, { ...WRITE, description: 'Writes a note, differently' }, UNUSED]);
    expect((await run(ws)).code).toBe(0);
    expect(ws.calls()).toEqual(['read', 'write']);

    const first = await lock(ws);
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe('wrote runner.lock: 2 tools of 1 app\n');
    expect(first.code).toBe(0);
    const locked = JSON.parse(readFileSync(join(ws.dir, 'runner.lock'), 'utf8'));
    expect(locked.version).toBe(1);
    expect(Object.keys(locked.apps.notes.tools)).toEqual(['read', 'write']);
    expect(locked.apps.notes.tools.write).toMatchObject({ description: 'Writes a note, differently', hash: expect.stringMatching(/^sha256:/) });
    expect(locked.apps.notes.server).toEqual({ name: 'shifting', version: '1.0.0' });

    const again = await lock(ws);
    expect([again.code, again.stdout]).toEqual([0, 'runner.lock is up to date: 2 tools of 1 app\n']);
  });

  it.for([
    ['a description rewritten', (tools: FixtureTool[]) => [tools[0]!, { ...tools[1]!, description: 'Writes a note and mails it to everyone' }, tools[2]!], 'notes.write\n  description changed\n    was: "Writes a note"\n    now: "Writes a note and mails it to everyone"\n'],
    [
      'a new required argument',
      (tools: FixtureTool[]) => [tools[0]!, { ...tools[1]!, inputSchema: { type: 'object' as const, properties: { text: { type: 'string' }, to: { type: 'string' } }, required: ['text', 'to'] } }, tools[2]!],
      'notes.write\n  new required argument `to`\n    now: {"type":"string"}\n',
    ],
    ['readOnlyHint true → false', (tools: FixtureTool[]) => [{ ...tools[0]!, annotations: { readOnlyHint: false, openWorldHint: false } }, tools[1]!, tools[2]!], 'notes.read\n  less safe: readOnlyHint true → false (so now destructive, not idempotent)\n'],
  ] as const)('%s stops the run before any call with the diff (exit 2); runner lock --update lets the next run go', async ([, change, diff], { expect }) => {
    const ws = lockWorkspace();
    expect((await lock(ws)).code).toBe(0);
    const before = readFileSync(join(ws.dir, 'runner.lock'), 'utf8');
    ws.setTools(change([READ, WRITE, UNUSED]));

    const stopped = await run(ws);
    expect(stopped.code).toBe(2);
    expect(stopped.stderr).toContain(diff);
    expect(stopped.stderr).toMatch(/changed since .*runner\.lock was written: one change stops the run; nothing was sent/);
    expect(stopped.stderr).toContain('runner lock --update');
    expect(ws.calls()).toEqual([]);
    expect(await runRecords(ws)).toEqual([]); // no run was recorded

    // Without --update the lock is not changed.
    const refused = await lock(ws);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(diff);
    expect(readFileSync(join(ws.dir, 'runner.lock'), 'utf8')).toBe(before);

    // The workflow passes a newly required argument once someone has looked at it.
    if (diff.includes('new required argument')) ws.write('workflows/notes.yaml', WORKFLOW.replace('text: "${{ steps.read.text }}"', 'text: "${{ steps.read.text }}", to: "ops"'));
    const updated = await lock(ws, '--update');
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain(diff);
    expect(updated.stdout).toMatch(/updated runner\.lock: 2 tools of 1 app\n$/);
    expect((await run(ws)).code).toBe(0);
    expect(ws.calls()).toEqual(['read', 'write']);
  });

  it('shows every change worst first: less safe, new required argument, description, new optional argument', async ({ expect }) => {
    const ws = lockWorkspace();
    expect((await lock(ws)).code).toBe(0);
    ws.setTools([
      { ...WRITE, description: 'Writes and mails', inputSchema: { type: 'object', properties: { text: { type: 'string' }, to: { type: 'string' }, cc: { type: 'string' } }, required: ['text', 'to'] } },
      { ...READ, annotations: { readOnlyHint: false, openWorldHint: false } },
      UNUSED,
    ]);
    const stopped = await run(ws);
    expect(stopped.code).toBe(2);
    const order = ['notes.read', 'less safe: readOnlyHint true → false', 'notes.write', 'new required argument `to`', 'description changed', 'new optional argument `cc`'];
    const at = order.map((text) => stopped.stderr.indexOf(text));
    expect(at.every((index) => index >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(stopped.stderr).toMatch(/4 changes stop the run/);
  });

  it('a change in a tool no workflow calls does not stop the run; a new server version is a warning', async ({ expect }) => {
    const ws = lockWorkspace();
    expect((await lock(ws)).code).toBe(0);
    ws.setTools([READ, WRITE, { ...UNUSED, description: 'Deletes everything', annotations: { destructiveHint: true } }]);
    const result = await run(ws);
    expect([result.code, result.stderr]).toEqual([0, expect.not.stringContaining('runner.lock')]);
    expect(ws.calls()).toEqual(['read', 'write']);

    ws.setTools([READ, WRITE, UNUSED], { name: 'shifting', version: '1.1.0' });
    const bumped = await run(ws);
    expect(bumped.code).toBe(0);
    expect(bumped.stderr).toContain('warning: runner.lock: notes: server version changed: "1.0.0" → "1.1.0"');
    expect(ws.calls()).toEqual(['read', 'write', 'read', 'write']);
  });

  it('a tool that changes mid-run (tools/list_changed) is not called', async ({ expect }) => {
    const ws = lockWorkspace();
    expect((await lock(ws)).code).toBe(0);
    const config = join(ws.dir, 'runner.config.yaml');
    const next = ws.write('next.json', JSON.stringify({ tools: [READ, { ...WRITE, annotations: { readOnlyHint: false, openWorldHint: false } }, UNUSED] }));
    writeFileSync(config, readFileSync(config, 'utf8').replace('calls.log"]', `calls.log", ${JSON.stringify(next)}]`));
    const result = await runInProcess(['run', 'workflows/notes.yaml', '--json'], { cwd: ws.dir });
    expect(result.code).toBe(1);
    const record = JSON.parse(result.stdout);
    expect(record.steps.map((step: { status: string }) => step.status)).toEqual(['succeeded', 'failed']);
    expect(record.steps[1].error).toMatchObject({ kind: 'policy', message: expect.stringMatching(/notes\.write changed since runner\.lock was written \(less safe: destructiveHint false → absent \(true\)\); it was not called/) });
    expect(ws.calls()).toEqual(['read']);
  });

  it('a hand-edited lock is refused with file:line:col', async ({ expect }) => {
    const ws = lockWorkspace();
    expect((await lock(ws)).code).toBe(0);
    const file = join(ws.dir, 'runner.lock');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"Writes a note"', '"Writes a note, trust me"'));
    const result = await run(ws);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/runner\.lock:\d+:\d+: the hash of tool `notes\.write` does not match its fields/);
    expect(ws.calls()).toEqual([]);
  });

  it('runner watch reports drift once across firings, starts no run, and runs again after runner lock --update', async ({ expect, onTestFinished }) => {
    const ws = lockWorkspace();
    ws.write('workflows/notes.yaml', WORKFLOW.replace('steps:', 'on:\n  watch:\n    paths: ["inbox/*.txt"]\n    debounce: 50ms\nsteps:'));
    ws.write('inbox/.keep', '');
    expect((await lock(ws)).code).toBe(0);
    ws.setTools([{ ...READ, annotations: { readOnlyHint: false, openWorldHint: false } }, WRITE, UNUSED]);
    const serve = startServe(ws, ['watch'], { onTestFinished });
    const ofType = (events: Event[], type: string) => events.filter((event) => event.type === type);
    await serve.until((events) => ofType(events, 'ready').length === 1, 'ready');

    ws.write('inbox/one.txt', 'one\n');
    await serve.until((events) => ofType(events, 'run-refused').length === 1, 'the first firing refused');
    ws.write('inbox/two.txt', 'two\n');
    await serve.until((events) => ofType(events, 'run-refused').length === 2, 'the second firing refused');
    expect(ofType(serve.events, 'lock-drift')).toHaveLength(1);
    expect(ofType(serve.events, 'lock-drift')[0]).toMatchObject({ workflow: 'notes', stops: true, drifts: [{ tool: 'read', severity: 'less-safe' }] });
    expect(serve.stderr().match(/less safe: readOnlyHint true → false/g)).toHaveLength(1);
    expect(ws.calls()).toEqual([]);

    expect((await lock(ws, '--update')).code).toBe(0);
    ws.write('inbox/three.txt', 'three\n');
    await serve.until((events) => ofType(events, 'run-finished').length === 1, 'a run after the update');
    expect(await serve.stop('SIGTERM')).toBe(0);
    expect(ofType(serve.events, 'run-finished')[0]).toMatchObject({ status: 'succeeded' });
    expect(ofType(serve.events, 'lock-drift')).toHaveLength(1);
    expect(ws.calls()).toEqual(['read', 'write']);
  });

  it("the repository's runner.lock matches the demo apps", async ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-demo-lock-'));
    for (const name of ['runner.config.yaml', 'runner.lock', 'workflows']) cpSync(join(repoRoot, name), join(dir, name), { recursive: true });
    symlinkSync(join(repoRoot, 'examples'), join(dir, 'examples'));
    // Every workflow but the one whose app is served over HTTP (started by hand): their entries are compared, the rest kept.
    const local = readdirSync(join(dir, 'workflows')).filter((name) => name !== 'quote-over-http.yaml').map((name) => join('workflows', name));
    const result = await runInProcess(['lock', ...local], { cwd: dir });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('runner.lock is up to date: 14 tools of 3 apps\n');
    expect(result.code).toBe(0);
  });
});
