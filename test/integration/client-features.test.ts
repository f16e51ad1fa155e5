import { join } from 'node:path';
import { describe, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, everythingApp, repoRoot } from '../helpers/workspace.js';

const askingApp = join(repoRoot, 'test', 'apps', 'asking.js');

/** Runs a workflow (steps YAML) through the CLI against one app; returns the run record. */
async function runSteps(app: { name: string; args: string[]; stopTimeout?: string }, steps: string) {
  const stop = app.stopTimeout ? `    stop-timeout: ${app.stopTimeout}\n` : '';
  const ws = createWorkspace(`apps:\n  ${app.name}:\n    command: node\n    args: ${JSON.stringify(app.args)}\n${stop}`);
  const workflow = ws.write('wf.yaml', `name: wf\nsteps:\n${steps}`);
  const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
  let record;
  try {
    record = JSON.parse(result.stdout);
  } catch {
    throw new Error(`runner run exited ${result.code} without a run record; stderr: ${result.stderr.slice(-1500)}`);
  }
  return { code: result.code, step: (id: string) => record.steps.find((step: { id: string }) => step.id === id) };
}

const asking = { name: 'asking', args: [askingApp] };

// Each test runs its own app; the task test mostly waits on the server's polling interval: they run at once.
describe.concurrent('client features', () => {
  describe('client capabilities a server sees', () => {
    it('declares form elicitation with applyDefaults, and no sampling', async ({ expect }) => {
      const run = await runSteps(asking, '  - id: caps\n    uses: asking.capabilities\n');
      const declared = JSON.parse(run.step('caps').text);
      expect(declared.elicitation).toEqual({ form: { applyDefaults: true } });
      expect(declared).not.toHaveProperty('sampling');
    });

    it('answers a sampling request it never offered with a JSON-RPC error that says why', async ({ expect }) => {
      const run = await runSteps(asking, '  - id: sample\n    uses: asking.sample\n');
      expect(run.step('sample').status).toBe('succeeded');
      expect(run.step('sample').text).toBe('refused -32601: runner has no language model: sampling/createMessage is not supported (no sampling capability was declared)');
    });
  });

  describe('elicitation defaults (SEP-1034)', () => {
    it("fills the schema's defaults into an accepted answer, and accepts on defaults alone when the step has `elicit:`", async ({ expect }) => {
      const run = await runSteps(
        asking,
        [
          '  - id: given\n    uses: asking.defaults\n    elicit: { nickname: Ada, age: 41 }\n',
          '  - id: defaults-only\n    needs: [given]\n    uses: asking.defaults\n    elicit: {}\n',
          '  - id: unanswered\n    needs: [defaults-only]\n    uses: asking.defaults\n',
        ].join(''),
      );
      expect(run.code).toBe(0);
      expect(JSON.parse(run.step('given').text)).toEqual({ action: 'accept', content: { name: 'John Doe', age: 41, status: 'active', verified: true, nickname: 'Ada' } });
      expect(run.step('given').elicitations[0]).toMatchObject({ action: 'accept', source: 'workflow' });
      expect(JSON.parse(run.step('defaults-only').text)).toEqual({ action: 'accept', content: { name: 'John Doe', age: 30, status: 'active', verified: true } });
      // No `elicit:` and no terminal: defaults are not consent.
      expect(JSON.parse(run.step('unanswered').text)).toEqual({ action: 'decline' });
    });
  });

  describe('tasks (2025-11-25)', () => {
    it("calls server-everything's task-only tool as a task, answering its mid-task question", async ({ expect }) => {
      // The reference server does not exit when its stdin closes (its timers keep it alive), so the run
      // would end with the default 2 s wait before SIGTERM; stopping it is not what this test is about.
      const everything = { name: 'everything', args: [everythingApp, 'stdio'], stopTimeout: '200ms' };
      const run = await runSteps(
        everything,
        '  - id: research\n    uses: everything.simulate-research-query\n    with: { topic: python, ambiguous: true }\n    elicit: { interpretation: snake }\n',
      );
      expect(run.code).toBe(0);
      const step = run.step('research');
      expect(step.status).toBe('succeeded');
      expect(step.text).toContain('# Research Report: python (snake)');
      expect(step.elicitations).toEqual([expect.objectContaining({ action: 'accept', answered: ['interpretation'], source: 'workflow' })]);
    });

    it('fails a task-only tool as unavailable, naming the missing capability, when the app offers no tasks', async ({ expect }) => {
      const run = await runSteps(asking, '  - id: task\n    uses: asking.task_only\n');
      expect(run.code).toBe(1);
      expect(run.step('task').error).toMatchObject({ kind: 'unavailable', outcome: 'not-sent' });
      expect(run.step('task').error.message).toContain('capabilities.tasks.requests.tools.call');
      expect(run.step('task').text ?? '').not.toContain('called without a task');
    });
  });
});
