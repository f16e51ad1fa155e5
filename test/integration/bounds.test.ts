import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createWorkspace, faultyApp, runCli } from '../helpers/workspace.js';

// What a hostile app can drive stays bounded: the time the runner waits for
// an app that never answers its handshake, and the size of its log.

function workspace(appFlags: string[], appYaml = '') {
  const ws = createWorkspace('');
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify([faultyApp, ...appFlags])}\n${appYaml}`);
  const run = async (steps: string) => {
    const workflow = ws.write('wf.yaml', `name: wf\nsteps:\n${steps}`);
    const result = await runCli(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
    return { ...result, record: JSON.parse(result.stdout) };
  };
  return { ws, run };
}

describe('waiting for an app', () => {
  it("is bounded by the app's connect-timeout: the app is unavailable, named with the limit", async () => {
    const { run } = workspace(['--never-answer'], '    connect-timeout: 500ms\n');
    const result = await run('  - id: a\n    uses: faulty.echo\n');
    expect(result.record.steps[0].error).toMatchObject({ kind: 'unavailable', outcome: 'not-sent' });
    expect(result.record.steps[0].error.message).toMatch(/failed to start/);
  });
});

describe("an app's log", () => {
  it('keeps at most max-log of a stderr flood without newlines: its beginning, a marker and its end', async () => {
    const { run } = workspace(['--stderr-flood', String(8 * 1024 * 1024)], '    max-log: 1MiB\n');
    const result = await run('  - id: a\n    uses: faulty.slow\n    with: { ms: 1500 }\n');
    expect(result.code).toBe(0);
    const log = join(result.record.dir, 'logs', 'faulty.log');
    expect(statSync(log).size).toBeLessThanOrEqual(1024 * 1024 + 200);
    const text = readFileSync(log, 'utf8');
    expect(text.startsWith('#')).toBe(true);
    expect(text).toMatch(/\[runner: [\d.]+MiB of this app's stderr left out here \(max-log\); the last part follows\]/);
    expect(text.trimEnd().endsWith('faulty: flood done')).toBe(true);
  });
});
