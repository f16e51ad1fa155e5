import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAlive } from '../../src/apps/process-tree.js';
import { runInProcess } from '../helpers/in-process.js';
import { cliPath, createWorkspace, type Workspace, faultyArgs } from '../helpers/workspace.js';

/** A workspace with the faulty app, a side-effect counter and one workflow built from `steps`. */
function faultyWorkspace(steps: string, appFlags: string[] = []): { ws: Workspace; workflow: string; counter: string } {
  const ws = createWorkspace('');
  const counter = join(ws.dir, 'counter.txt');
  const args = [...faultyArgs, '--counter', counter, '--state', join(ws.dir, 'state'), ...appFlags];
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(args)}\n`);
  const workflow = ws.write('wf.yaml', `name: wf\nsteps:\n${steps}`);
  return { ws, workflow, counter };
}

async function runWorkflow(steps: string, appFlags: string[] = []) {
  const { ws, workflow, counter } = faultyWorkspace(steps, appFlags);
  // Provoked for real: the app is a process (a crash is its exit, a timeout leaves it running).
  const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir, apps: 'process' });
  // When the runner printed no record, say what it did print (a rare empty stdout was seen once in CI).
  if (!result.stdout.trim()) throw new Error(`no run record on stdout (exit ${result.code}, signal ${result.signal}); stderr:\n${result.stderr}`);
  const record = JSON.parse(result.stdout);
  const step = (id: string) => record.steps.find((entry: { id: string }) => entry.id === id);
  const sideEffects = () => (existsSync(counter) ? readFileSync(counter, 'utf8').split('\n').filter(Boolean) : []);
  return { result, record, step, sideEffects };
}

describe('failure kinds, provoked for real (docs/apps.md, Failures)', () => {
  it('tool: a result with isError', async () => {
    const { result, step } = await runWorkflow('  - id: a\n    uses: faulty.fail\n    with: { message: "disk full" }\n');
    expect(result.code).toBe(1);
    expect(step('a')).toMatchObject({ status: 'failed', attempts: 1, error: { kind: 'tool' } });
    expect(step('a').error.message).toContain('disk full');
    expect(step('a').text).toContain('disk full');
  });

  it("an app's error message cannot steer the terminal: its control characters are shown escaped, and kept as sent in the record", async () => {
    // The workflow's YAML string turns each \uXXXX into the control character itself, which the app sends back in its error.
    const { result, step } = await runWorkflow('  - id: a\n    uses: faulty.fail\n    with: { message: "before \\u001b[2J\\u001b]0;PWNED\\u0007 after \\u009b31m red" }\n');
    expect(step('a').error.message).toContain('before \u001b[2J\u001b]0;PWNED\u0007 after \u009b31m red');
    expect(result.stderr).toContain('reported an error: before \\u001b[2J\\u001b]0;PWNED\\u0007 after \\u009b31m red');
    // eslint-disable-next-line no-control-regex -- control characters are what must not be there
    expect(result.stderr).not.toMatch(/[\u001b\u0007\u009b]/);
  });

  it('protocol: a JSON-RPC error response', async () => {
    const { result, step } = await runWorkflow('  - id: a\n    uses: faulty.rpc_error\n    with: { code: -32001 }\n');
    expect(result.code).toBe(1);
    expect(step('a').error.kind).toBe('protocol');
    expect(step('a').error.message).toContain('-32001');
  });

  it('transport: the app dies mid-call; the call fails at once, the side effect is not repeated, the outcome is unknown', async () => {
    const { result, step, sideEffects } = await runWorkflow(
      '  - id: a\n    uses: faulty.crash\n    with: { afterSideEffect: true }\n    timeout: 60s\n    retry: { attempts: 3, delay: 10ms }\n',
    );
    expect(result.code).toBe(1);
    expect(step('a')).toMatchObject({ status: 'failed', attempts: 1, error: { kind: 'transport', outcome: 'unknown' } });
    expect(sideEffects()).toEqual(['crash']);
  });

  it('timeout: a call that never answers is cancelled at its timeout', async () => {
    const { result, step } = await runWorkflow('  - id: a\n    uses: faulty.hang\n    timeout: 300ms\n  - id: b\n    uses: faulty.echo\n    needs: [a]\n');
    expect(result.code).toBe(1);
    expect(step('a')).toMatchObject({ status: 'failed', error: { kind: 'timeout' } });
    expect(step('a').error.message).toContain('300ms');
    expect(step('b').status).toBe('skipped');
  });

  it('a timeout longer than one Node timer holds (30d, 25d) is not a timeout at once', async () => {
    // A 30d timer handed to Node as it is fires after 1 ms: the step failed as a timeout in 13 ms.
    const { result, record, step } = await runWorkflow('  - id: a\n    uses: faulty.echo\n    timeout: 30d\n    idle-timeout: 25d\n    with: { text: long, delayMs: 50 }\n');
    expect(step('a')).toMatchObject({ status: 'succeeded' });
    expect(result.code).toBe(0);
    expect(record.status).toBe('succeeded');
  });

  it('unavailable: no such tool, and an app that fails to start (with its stderr)', async () => {
    const missing = await runWorkflow('  - id: a\n    uses: faulty.nope\n');
    expect(missing.step('a').error.kind).toBe('unavailable');
    expect(missing.step('a').error.message).toContain('has no tool `nope`');
    expect(missing.step('a').error.message).toContain('echo');
    const typo = await runWorkflow('  - id: a\n    uses: faulty.ecoh\n');
    expect(typo.step('a').error.message).toMatch(/^app `faulty` has no tool `ecoh` \(did you mean `echo`\? tools: /);

    const broken = await runWorkflow('  - id: a\n    uses: faulty.echo\n', ['--crash-on-start']);
    expect(broken.result.code).toBe(1);
    expect(broken.step('a').error.kind).toBe('unavailable');
    expect(broken.step('a').error.message).toContain('failed to start');
    expect(broken.step('a').error.message).toContain('faulty: boom at startup');
  });

  it('input: arguments that break the inputSchema, and an expression that fails, send nothing', async () => {
    const { result, step, sideEffects } = await runWorkflow(
      [
        '  - id: a',
        '    uses: faulty.work',
        '    with: { delayMs: "soon" }',
        '  - id: b',
        '    uses: faulty.work',
        "    with: { label: \"${{ fromJSON('not json') }}\" }",
        '',
      ].join('\n'),
    );
    expect(result.code).toBe(1);
    expect(step('a')).toMatchObject({ status: 'failed', attempts: 0, error: { kind: 'input' } });
    expect(step('a').error.message).toContain('delayMs');
    expect(step('b').error.kind).toBe('input');
    expect(sideEffects()).toEqual([]);
  });

  it('cancelled: Ctrl-C cancels the in-flight call, records the run as cancelled, leaves no process behind, exits 130', async () => {
    const { ws, workflow } = faultyWorkspace('  - id: a\n    uses: faulty.hang\n  - id: b\n    uses: faulty.echo\n    needs: [a]\n', ['--spawn-grandchild', 'PIDS']);
    // The grandchild pid file lives in the workspace.
    const pids = join(ws.dir, 'PIDS');
    ws.write('runner.config.yaml', readFileSync(ws.config, 'utf8').replace('"PIDS"', JSON.stringify(pids)));
    const child = spawn(process.execPath, [cliPath, '--config', ws.config, 'run', workflow], { cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let interrupted = false;
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (!interrupted && stderr.includes('a running')) {
        interrupted = true; // once: a second Ctrl-C means "exit at once"
        child.kill('SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(130);
    const runDir = stderr.match(/started → (\S+)/)![1]!;
    const record = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
    expect(record.status).toBe('cancelled');
    expect(record.steps[0]).toMatchObject({ status: 'cancelled', error: { kind: 'cancelled' } });
    expect(record.steps[1].status).toBe('cancelled');
    const grandchildren = readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number);
    expect(grandchildren.length).toBeGreaterThan(0);
    for (const pid of grandchildren) expect(isAlive(pid)).toBe(false);
  });
});
