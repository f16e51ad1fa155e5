import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { cliPath, createWorkspace, demoAppsYaml, repoRoot, runCli, faultyArgs } from '../helpers/workspace.js';

// Each test has its own workspace and mostly waits on an app or a runner process: they run at once.
describe.concurrent('the run record', () => {
  describe('run.json', () => {
    it('is valid JSON whenever it is read, and follows the run while it changes', async ({ expect }) => {
      const ws = createWorkspace(`apps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n`);
      const workflow = ws.write('wf.yaml', 'name: wf\nsteps:\n  - id: quick\n    uses: faulty.echo\n  - id: slow\n    uses: faulty.slow\n    needs: [quick]\n    with: { ms: 1500 }\n');
      const child = spawn(process.execPath, [cliPath, '--config', ws.config, 'run', workflow], { cwd: ws.dir, stdio: 'ignore' });
      const exited = new Promise((resolve) => child.on('close', resolve));
      const seen: string[] = [];
      let done = false;
      void exited.then(() => (done = true));
      const look = () => {
        const runs = existsSync(join(ws.artifacts, 'wf')) ? readdirSync(join(ws.artifacts, 'wf')) : [];
        if (runs.length === 1 && existsSync(join(ws.artifacts, 'wf', runs[0]!, 'run.json'))) {
          const record = JSON.parse(readFileSync(join(ws.artifacts, 'wf', runs[0]!, 'run.json'), 'utf8')); // never torn
          seen.push(`${record.status}:${record.steps.map((step: { status: string }) => step.status).join(',')}`);
        }
      };
      while (!done) {
        look();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      look(); // once more after the process ended: the final record
      // While `slow` ran, the file already said that `quick` had succeeded and `slow` was running.
      expect(seen).toContain('running:succeeded,running');
      expect(seen.at(-1)).toBe('succeeded:succeeded,succeeded');
    });
  });

  describe('secrets', () => {
    it('never shows a secret value anywhere the runner writes', async ({ expect }) => {
      const ws = createWorkspace(`secrets: [API_TOKEN]\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n`);
      const workflow = ws.write(
        'wf.yaml',
        'name: wf\nsteps:\n  - id: a\n    uses: faulty.echo\n    with: { text: "token=${{ env.API_TOKEN }}" }\n  - id: b\n    uses: faulty.fail\n    with: { message: "bad ${{ env.API_TOKEN }}" }\n',
      );
      const secret = 's3cr3t-value-42';
      // A real process: everything it prints, a library's console output included, reaches the streams checked here.
      const result = await runCli(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir, env: { API_TOKEN: secret } });
      expect(result.code).toBe(1);
      expect(result.stdout).not.toContain(secret);
      expect(result.stderr).not.toContain(secret);
      const record = JSON.parse(result.stdout);
      expect(record.steps[0].text).toBe('token=***');
      expect(record.steps[1].error.message).toContain('bad ***');
      const onDisk = readFileSync(join(record.dir, 'run.json'), 'utf8');
      expect(onDisk).not.toContain(secret);
      expect(onDisk).toContain('token=***');
    });
  });

  describe('foreach and inputs', () => {
    it('runs workflows/logo-variants.yaml: arrays of outputs, one folder per item', async ({ expect }) => {
      const ws = createWorkspace(demoAppsYaml() + 'policy:\n  rules:\n    - { match: "sheet.write_range", action: allow }\n');
      const inputs = ws.write('inputs.json', JSON.stringify({ names: ['Alpha', 'Beta', 'Gamma'] }));
      const result = await runInProcess(['--config', ws.config, 'run', join(repoRoot, 'workflows', 'logo-variants.yaml'), '--inputs', inputs, '--json'], { cwd: ws.dir });
      expect(result.stderr).toContain('count succeeded');
      expect(result.code).toBe(0);
      const record = JSON.parse(result.stdout);
      const logos = record.steps.find((step: { id: string }) => step.id === 'logos');
      expect(logos.items.map((item: { status: string }) => item.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      expect(logos.outputs).toHaveLength(3);
      expect(logos.outputs[1].path).toBe(join(record.dir, 'logos', 'logo-1.png'));
      const thumbs = record.steps.find((step: { id: string }) => step.id === 'thumbs');
      expect(thumbs.files).toHaveLength(3);
      expect(thumbs.files[2]).toBe(join(record.dir, 'thumbs', '2', 'image-0.png'));
      for (const index of [0, 1, 2]) expect(existsSync(join(record.dir, 'thumbs', String(index), 'result.json'))).toBe(true);
    });

    it('rejects bad inputs with exit 2 before anything runs', async ({ expect }) => {
      const ws = createWorkspace(demoAppsYaml());
      const workflow = join(repoRoot, 'workflows', 'logo-variants.yaml');
      const unknown = await runInProcess(['--config', ws.config, 'run', workflow, '-i', 'nmes=[]'], { cwd: ws.dir });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('nmes');
      const wrongType = await runInProcess(['--config', ws.config, 'run', workflow, '-i', 'names=Alpha'], { cwd: ws.dir });
      expect(wrongType.code).toBe(2);
      expect(wrongType.stderr).toMatch(/names.*expected/);
      expect(existsSync(join(ws.artifacts, 'logo-variants'))).toBe(false);
    });
  });
});
