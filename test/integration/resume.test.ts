import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, faultyArgs } from '../helpers/workspace.js';

function workspace(steps: string) {
  const ws = createWorkspace('');
  const counter = join(ws.dir, 'counter.txt');
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify([...faultyArgs, '--counter', counter, '--state', join(ws.dir, 'state')])}\n`);
  const workflow = ws.write('wf.yaml', `name: wf\nsteps:\n${steps}`);
  const sideEffects = () => readFileSync(counter, 'utf8').split('\n').filter(Boolean);
  const cli = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const result = await runInProcess(['--config', ws.config, ...args], { cwd: ws.dir, env });
    return { ...result, record: result.stdout.startsWith('{') ? JSON.parse(result.stdout) : null };
  };
  return { ws, workflow, sideEffects, cli };
}

// Each test has its own workspace and processes, and part of each is waiting on them: they run at once.
describe.concurrent('resume', () => {
  describe('runner resume', () => {
    it('continues a failed run without running its succeeded steps again', async ({ expect }) => {
      const { workflow, sideEffects, cli } = workspace(
        '  - id: a\n    uses: faulty.work\n    with: { label: a }\n  - id: b\n    uses: faulty.crash_once\n    needs: [a]\n  - id: c\n    uses: faulty.echo\n    with: { text: "count=${{ steps.a.outputs.count }}" }\n    needs: [b]\n',
      );
      const first = await cli(['run', workflow, '--json']);
      expect(first.code).toBe(1);
      expect(first.record.steps.map((step: { status: string }) => step.status)).toEqual(['succeeded', 'failed', 'skipped']);

      const resumed = await cli(['resume', first.record.id.slice(0, 15), '--json']);
      expect(resumed.code).toBe(0);
      expect(resumed.record.id).toBe(first.record.id);
      expect(resumed.record.status).toBe('succeeded');
      expect(resumed.record.steps[0]).toEqual(first.record.steps[0]); // kept as it was
      expect(resumed.record.steps[1].history).toHaveLength(2); // the failed attempt, then the one that worked
      expect(resumed.record.steps[2].text).toBe("count=1"); // outputs of the kept step still feed expressions
      expect(resumed.record.resumedAt).toHaveLength(1);
      expect(sideEffects()).toEqual(['a']);

      const runs = await cli(['runs', '--json']);
      expect(JSON.parse(runs.stdout).map((run: { id: string; status: string }) => [run.id, run.status])).toEqual([[first.record.id, 'succeeded']]);
      const again = await cli(['resume', first.record.id]);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain('already succeeded');
    });

    it('re-runs a step whose outcome is unknown only with --rerun-unknown', async ({ expect }) => {
      // A step's timeout also covers starting the app: `warm` starts it in the first run, so there `a`'s call
      // is sent at once and outlives its timeout (A_DELAY_MS). The run again with --rerun-unknown starts the app
      // cold (the 2 s are for that) and need not wait for another timeout.
      const { workflow, sideEffects, cli } = workspace(
        '  - id: warm\n    uses: faulty.echo\n  - id: a\n    needs: [warm]\n    uses: faulty.work\n    with: { label: a, delayMs: "${{ fromJSON(env.A_DELAY_MS) }}" }\n    timeout: 2s\n',
      );
      const first = await cli(['run', workflow, '--json'], { A_DELAY_MS: '10000' });
      expect(first.record.steps[1].error).toMatchObject({ kind: 'timeout', outcome: 'unknown' });

      const kept = await cli(['resume', first.record.id, '--json'], { A_DELAY_MS: '0' });
      expect(kept.code).toBe(1);
      expect(kept.record.steps[1].error.message).toContain('--rerun-unknown');
      expect(sideEffects()).toEqual(['a']);

      const rerun = await cli(['resume', first.record.id, '--rerun-unknown', '--json'], { A_DELAY_MS: '0' });
      expect(rerun.code).toBe(0);
      // Sent once more: the timed-out attempt, then the one that ran again.
      expect(rerun.record.steps[1]).toMatchObject({ status: 'succeeded', error: null });
      expect(rerun.record.steps[1].history).toHaveLength(2);
      expect(rerun.record.steps[1].history[0].error).toMatchObject({ kind: 'timeout', outcome: 'unknown' });
      expect(sideEffects()).toEqual(['a', 'a']);
    });

    it('exits 2 for a run id that does not exist', async ({ expect }) => {
      const { cli } = workspace('  - id: a\n    uses: faulty.echo\n');
      const result = await cli(['resume', '20990101']);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('no run `20990101`');
    });
  });
});
