import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { shiftingWorkspace, type ShiftingTool } from '../helpers/shifting-workspace.js';
import { createWorkspace, demoAppsYaml, repoRoot } from '../helpers/workspace.js';

// Each test has its own workspace and processes, and part of each is waiting on them: they run at once.
describe.concurrent('cli commands', () => {
  describe('the installed command', () => {
    it('`npx runner` runs the built CLI from the repository, as the README says', async ({ expect }) => {
      const result = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn('npx', ['--no-install', 'runner', '--version'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
        let stdout = '';
        child.stdout.on('data', (chunk) => (stdout += chunk));
        child.on('close', (code) => resolve({ code, stdout }));
      });
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toBe('0.1.0');
    });
  });

  describe('runner tools', () => {
    it('lists every tool with its annotations and the decision that applies', async ({ expect }) => {
      const ws = createWorkspace(demoAppsYaml() + 'policy:\n  rules:\n    - { match: "sheet.delete_*", action: deny }\n');
      const result = await runInProcess(['--config', ws.config, 'tools', '--json'], { cwd: ws.dir });
      expect(result.code).toBe(0);
      const listing = JSON.parse(result.stdout);
      const sheet = listing.find((entry: { app: string }) => entry.app === 'sheet');
      const byName = Object.fromEntries(sheet.tools.map((tool: { name: string }) => [tool.name, tool]));
      expect(byName.read_range.policy).toEqual({ action: 'allow', reason: 'read-only' });
      expect(byName.write_range.policy).toEqual({ action: 'ask', reason: 'destructive' });
      expect(byName.delete_sheet.policy).toEqual({ action: 'deny', reason: 'rule sheet.delete_*' });
      expect(byName.create_workbook.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: false });

      const text = await runInProcess(['--config', ws.config, 'tools', 'image'], { cwd: ws.dir });
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/image\.info\s+allow\s+read-only/);
      expect(text.stdout).not.toContain('sheet.');
    });

    it('exits 2 for an app that is not in the config', async ({ expect }) => {
      const ws = createWorkspace(demoAppsYaml());
      const result = await runInProcess(['--config', ws.config, 'tools', 'nope'], { cwd: ws.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('no app named `nope`');
    });
  });

  describe('runner validate', () => {
    it('accepts every example workflow statically', async ({ expect }) => {
      const files = ['logo-to-quote.yaml', 'logo-variants.yaml', 'quote-over-http.yaml'].map((name) => join(repoRoot, 'workflows', name));
      const result = await runInProcess(['validate', ...files], { cwd: repoRoot });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.split('\n').filter((line) => line.startsWith('ok '))).toHaveLength(3);
    });

    it('--online catches an unknown tool and arguments that break the inputSchema, with positions', async ({ expect }) => {
      const ws = createWorkspace(demoAppsYaml());
      const file = ws.write(
        'wf.yaml',
        [
          'name: wf',
          'steps:',
          '  - id: a',
          '    uses: image.info',
          '    with: { path: x.png, colour: red }',
          '  - id: b',
          '    uses: image.nope',
          '  - id: c',
          '    uses: image.resize',
          '    with: { path: "${{ steps.a.outputs.path }}" }',
          '',
        ].join('\n'),
      );
      const offline = await runInProcess(['--config', ws.config, 'validate', file], { cwd: ws.dir });
      expect(offline.code).toBe(0);
      const online = await runInProcess(['--config', ws.config, 'validate', '--online', file], { cwd: ws.dir });
      expect(online.code).toBe(2);
      expect(online.stderr).toContain(`${file}:5:26: step \`a\`: unknown argument \`colour\`\n  hint: arguments: path`);
      expect(online.stderr).toMatch(new RegExp(`${file}:7:11: step \`b\`: app \`image\` has no tool \`nope\``));
      expect(online.stderr).toContain('step `c`: missing required argument `width`');
      expect(online.stderr).not.toContain('`path`');
    });
  });

  describe('runner run --dry-run', () => {
    it('prints the plan with policy decisions and retry safety, calling nothing; exits 1 while a step would be denied', async ({ expect }) => {
      const ws = createWorkspace(demoAppsYaml());
      const result = await runInProcess(['--config', ws.config, 'run', join(repoRoot, 'workflows', 'logo-to-quote.yaml'), '--dry-run', '--json'], { cwd: ws.dir });
      expect(result.code).toBe(1);
      const plan = JSON.parse(result.stdout);
      expect(plan.levels[0]).toEqual(['logo', 'quote']);
      const byId = Object.fromEntries(plan.steps.map((step: { id: string }) => [step.id, step]));
      expect(byId.header.policy.action).toBe('deny'); // destructive → ask → no TTY
      expect(byId.readback.retry).toMatchObject({ safe: true, why: 'read-only' });
      expect(byId.quote.retry.safe).toBe(false);
      expect(byId.logo.retry).toMatchObject({ safe: true, why: 'idempotent' });
      expect(existsSync(join(ws.artifacts, 'logo-to-quote'))).toBe(false);

      const allowed = await runInProcess(['--config', ws.config, 'run', join(repoRoot, 'workflows', 'logo-to-quote.yaml'), '--dry-run', '--allow', 'sheet.write_*'], { cwd: ws.dir });
      expect(allowed.stdout).toMatch(/header\s+sheet\.write_range\n\s+policy: allow \(destructive; --allow sheet\.write_\*\)/);
      expect(allowed.code).toBe(0);
    });

    it('says what changed since runner.lock, as the run would, and exits 1 when the run would stop', async ({ expect }) => {
      const write = (readOnlyHint: boolean): ShiftingTool => ({
        name: 'write',
        description: 'Writes a note',
        inputSchema: { type: 'object', properties: {} },
        annotations: { readOnlyHint, openWorldHint: false },
      });
      const ws = shiftingWorkspace([write(true)], 'policy: { destructive: allow }\n');
      const workflow = ws.write('notes.yaml', 'name: notes\nsteps:\n  - id: write\n    uses: notes.write\n');
      const dryRun = (...extra: string[]) => runInProcess(['run', workflow, '--dry-run', ...extra], { cwd: ws.dir });
      expect(JSON.parse((await dryRun('--json')).stdout).lock).toBeNull();
      expect((await runInProcess(['lock', workflow], { cwd: ws.dir })).code).toBe(0);
      const clean = await dryRun('--json');
      expect(clean.code).toBe(0);
      expect(JSON.parse(clean.stdout).lock).toEqual({ file: join(ws.dir, 'runner.lock'), drifts: [] });

      ws.setTools([write(false)]);
      const drifted = await dryRun();
      expect(drifted.code).toBe(1);
      expect(drifted.stdout).toMatch(/the tools changed since .*runner\.lock was written; the run would stop before its first call .*\nnotes\.write\n  less safe: readOnlyHint true → false/);
      expect(JSON.parse((await dryRun('--json')).stdout).lock.drifts[0]).toMatchObject({ app: 'notes', tool: 'write', severity: 'less-safe', stops: true });
      expect(ws.calls()).toEqual([]);
    });
  });

  describe('policy at run time', () => {
    it('denies an ask without a TTY, sends nothing, skips what depends on it, and exits 1', async ({ expect }) => {
      const ws = createWorkspace(demoAppsYaml());
      const result = await runInProcess(['--config', ws.config, 'run', join(repoRoot, 'workflows', 'logo-to-quote.yaml'), '--json'], { cwd: ws.dir });
      expect(result.code).toBe(1);
      const record = JSON.parse(result.stdout);
      const byId = Object.fromEntries(record.steps.map((step: { id: string }) => [step.id, step]));
      expect(byId.header).toMatchObject({ status: 'denied', policy: 'deny', attempts: 0 });
      expect(byId.header.error).toEqual({
        kind: 'policy',
        outcome: 'not-sent',
        message:
          'sheet.write_range denied by policy (destructive; ask without a TTY); nothing was sent; to allow it, run with --yes or --allow sheet.write_range, ' +
          'or add `- { match: "sheet.write_range", action: allow }` under policy.rules in runner.config.yaml',
      });
      expect(byId.lines.status).toBe('skipped');
      expect(byId.logo.status).toBe('succeeded');
      expect(record.status).toBe('failed');
    });
  });
});
