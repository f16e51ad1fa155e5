import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { cliPath, createWorkspace, faultyArgs } from '../helpers/workspace.js';

const ESC = String.fromCharCode(0x1b);

/** Runs the CLI on a pseudo-terminal (util-linux `script`), answering prompts as they appear (typing the text, or calling the function). */
function runOnTerminal(args: string[], cwd: string, answers: [RegExp, string | (() => void)][]): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve) => {
    const command = [process.execPath, cliPath, ...args].map((part) => `'${part}'`).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    const pending = [...answers];
    child.stdout.on('data', (chunk) => {
      screen += chunk;
      const next = pending[0];
      if (next && next[0].test(screen)) {
        pending.shift();
        if (typeof next[1] === 'function') next[1]();
        else child.stdin.write(next[1]);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}

describe('on a terminal', () => {
  it('asks before an `ask` call and answers a tool’s question, with a live view', async () => {
    const ws = createWorkspace(`apps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\npolicy:\n  open-world: allow\n`);
    // `hold` runs until the live view has redrawn itself in place (moved the cursor up over its 3 lines): then the test ends it.
    const gate = join(ws.dir, 'redrawn.gate');
    const workflow = ws.write(
      'wf.yaml',
      `name: wf\nsteps:\n  - id: hold\n    uses: faulty.gate\n    with: { path: ${JSON.stringify(gate)} }\n  - id: a\n    uses: faulty.no_annotations\n    needs: [hold]\n  - id: b\n    uses: faulty.ask_name\n    needs: [a]\n`,
    );
    const { code, screen } = await runOnTerminal(['--config', ws.config, 'run', workflow], ws.dir, [
      [new RegExp(`${ESC}\\[3F`), () => writeFileSync(gate, '')],
      [/Allow\? \[y\] yes, this call/, 'y\n'],
      [/name: /, 'Ada\n'],
    ]);
    expect(screen).toContain('faulty.no_annotations (step a) needs approval: destructive');
    expect(screen).toContain('to stop being asked, add under policy.rules in runner.config.yaml: - { match: "faulty.no_annotations", action: allow }');
    expect(screen).toContain('\x1b[3F'); // the live view redraws in place
    expect(code).toBe(0);
    const runDir = screen.match(/→ (\S+)\r?\n/)![1]!;
    const record = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
    expect(record.steps[1]).toMatchObject({ status: 'succeeded', policy: 'allow' });
    expect(record.steps[2]).toMatchObject({ status: 'succeeded', text: 'hello Ada' });
    expect(record.steps[2].elicitations[0]).toMatchObject({ action: 'accept', source: 'terminal', answered: ['name'] });
  });

  it('a refused call is denied and nothing is sent', async () => {
    const ws = createWorkspace(`apps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\npolicy:\n  open-world: allow\n`);
    const workflow = ws.write('wf.yaml', 'name: wf\nsteps:\n  - id: a\n    uses: faulty.no_annotations\n');
    const { code, screen } = await runOnTerminal(['--config', ws.config, 'run', workflow], ws.dir, [[/Allow\? \[y\] yes, this call/, 'n\n']]);
    expect(code).toBe(1);
    expect(screen).toContain('refused at the prompt');
  });

  it('asks once for a whole foreach, and not again for a tool allowed for the rest of the run', async () => {
    const ws = createWorkspace(`apps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\npolicy:\n  open-world: allow\n`);
    const workflow = ws.write(
      'wf.yaml',
      'name: wf\nsteps:\n  - id: each\n    uses: faulty.no_annotations\n    foreach: [1, 2, 3]\n  - id: again\n    uses: faulty.no_annotations\n    needs: [each]\n',
    );
    const { code, screen } = await runOnTerminal(['--config', ws.config, 'run', workflow], ws.dir, [[/Allow\? \[y\] yes, every item of each/, 'a\n']]);
    expect(code).toBe(0);
    expect(screen.match(/needs approval/g)).toHaveLength(1);
    const runDir = screen.match(/→ (\S+)\r?\n/)![1]!;
    const record = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
    expect(record.steps[0].items.map((item: { status: string }) => item.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(record.steps[1]).toMatchObject({ status: 'succeeded', policy: 'allow' });
  });

  it('resuming a waiting run on a terminal asks about a step nobody answered, and records that answer as its approval', async () => {
    const ws = createWorkspace('');
    ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify([...faultyArgs, '--counter', join(ws.dir, 'counter.txt')])}\npolicy:\n  headless-ask: wait\n`);
    const workflow = ws.write('wf.yaml', 'name: wf\nsteps:\n  - id: one\n    uses: faulty.purge\n  - id: two\n    uses: faulty.purge\n');
    // The setup needs no terminal and no process of its own: only the resume does.
    const first = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
    const { id } = JSON.parse(first.stdout);
    expect((await runInProcess(['--config', ws.config, 'approve', id, 'one'], { cwd: ws.dir, env: { RUNNER_USER: 'ana' } })).code).toBe(0);
    const { code, screen } = await runOnTerminal(['--config', ws.config, 'resume', id], ws.dir, [[/Allow\? \[y\] yes, this call/, 'y\n']]);
    expect(code).toBe(0);
    expect(screen).toContain('faulty.purge (step two) needs approval');
    const record = JSON.parse(readFileSync(join(ws.artifacts, 'wf', id, 'run.json'), 'utf8'));
    expect(record.steps[0]).toMatchObject({ status: 'succeeded', approval: { decision: 'approved', by: 'ana', via: 'cli' } });
    expect(record.steps[1]).toMatchObject({ status: 'succeeded', policyReason: 'destructive; allowed at the prompt', approval: { decision: 'approved', by: expect.any(String), via: 'cli' } });
    expect(readFileSync(join(ws.dir, 'counter.txt'), 'utf8')).toBe('purge\npurge\n');
  });
});
