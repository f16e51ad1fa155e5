import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CheckReport } from '../../src/check/audit.js';
import { runInProcess } from '../helpers/in-process.js';
import { shiftingWorkspace, type ShiftingTool } from '../helpers/shifting-workspace.js';
import { createWorkspace, imageAppArgs, repoRoot, sheetAppArgs } from '../helpers/workspace.js';

const SECRETS = { IMAGE_KEY: 'image-key-0123456789', NOTES_TOKEN: 'notes-token-abcdefgh' };

/** The demo's apps and policy, with a secret passed to the image app and one to an HTTP app that no workflow uses. */
function demoWorkspace(policyExtra = '') {
  const workspace = createWorkspace(
    [
      'apps:',
      '  image:',
      '    command: node',
      `    args: ${JSON.stringify(imageAppArgs)}`,
      '    env: { IMAGE_KEY: "${IMAGE_KEY}" }',
      '  sheet:',
      '    command: node',
      `    args: ${JSON.stringify(sheetAppArgs)}`,
      '  notes:',
      '    url: http://127.0.0.1:9/mcp',
      '    headers: { Authorization: "Bearer ${NOTES_TOKEN}" }',
      'secrets: [IMAGE_KEY, NOTES_TOKEN]',
      'policy:',
      '  read-only: allow',
      '  destructive: ask',
      '  other: allow',
      '  open-world: ask',
      '  rules:',
      '    - { match: "sheet*.write_range", action: allow }',
      '    - { match: "sheet*.delete_sheet", action: deny }',
      policyExtra,
    ].join('\n'),
  );
  return workspace;
}

describe('runner check', () => {
  it('names every step’s decision and every secret’s flow in the demo workflow, sending nothing', async () => {
    const workspace = demoWorkspace();
    const demo = readFileSync(join(repoRoot, 'workflows', 'logo-to-quote.yaml'), 'utf8');
    // The logo's text now carries the image key: the logo step and everything that reads it can carry it.
    const file = workspace.write('workflows/logo-to-quote.yaml', demo.replace('text: ${{ inputs.company }}', 'text: "${{ inputs.company }} ${{ env.IMAGE_KEY }}"'));
    const result = await runInProcess(['check', file, '--json'], { cwd: workspace.dir, env: SECRETS });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as CheckReport;
    const [workflow] = report.workflows;
    expect(workflow!.name).toBe('logo-to-quote');
    expect(workflow!.triggered).toBe(false);
    expect(workflow!.steps.map((step) => [step.id, step.uses, step.policy!.action, step.policy!.rule ?? step.policy!.class])).toEqual([
      ['logo', 'image.render_text', 'allow', 'other'],
      ['small_logo', 'image.resize', 'allow', 'other'],
      ['preview', 'image.thumbnail', 'allow', 'read-only'],
      ['quote', 'sheet.create_workbook', 'allow', 'other'],
      ['header', 'sheet.write_range', 'allow', 'sheet*.write_range'],
      ['lines', 'sheet.write_range', 'allow', 'sheet*.write_range'],
      ['totals', 'sheet.write_range', 'allow', 'sheet*.write_range'],
      ['paste', 'sheet.insert_image', 'allow', 'other'],
      ['readback', 'sheet.read_range', 'allow', 'read-only'],
    ]);
    // The annotations as the apps list them, beside the spec's defaults.
    expect(workflow!.steps[2]!.annotations).toMatchObject({ readOnlyHint: true });
    expect(workflow!.steps[4]!.hints).toEqual({ readOnly: false, destructive: true, idempotent: true, openWorld: false });
    expect(report.destructive).toEqual(['logo-to-quote/header', 'logo-to-quote/lines', 'logo-to-quote/totals']);
    expect(report.openWorld).toEqual([]);
    expect(report.denied).toEqual([]);
    expect(workflow!.apps.image).toMatchObject({ protocolVersion: expect.any(String), server: { name: expect.any(String) }, error: null });

    expect(report.secrets.map((secret) => secret.name)).toEqual(['IMAGE_KEY', 'NOTES_TOKEN']);
    const [imageKey, notesToken] = report.secrets;
    expect(imageKey!.apps).toEqual([{ app: 'image', via: 'env', key: 'IMAGE_KEY' }]);
    expect(imageKey!.steps.map((step) => [step.step, step.through])).toEqual([
      ['logo', ['env.IMAGE_KEY']],
      ['small_logo', ['steps.logo']],
      ['preview', ['steps.logo']],
      ['paste', ['steps.small_logo']],
    ]);
    expect(imageKey!.steps[0]!.location).toMatchObject({ file, line: 17 });
    expect(notesToken).toEqual({ name: 'NOTES_TOKEN', apps: [{ app: 'notes', via: 'headers', key: 'Authorization' }], steps: [] });
    expect(result.stdout).not.toContain(SECRETS.IMAGE_KEY);
    expect(result.stdout).not.toContain(SECRETS.NOTES_TOKEN);
    // Nothing ran: no run was recorded and no run folder made.
    expect(readdirSync(workspace.artifacts)).toEqual(['.runner']);
    expect(existsSync(join(workspace.artifacts, '.runner', 'runs.db'))).toBe(false);
  });

  it('exits 1 when a step would be refused: a deny rule, or an ask in a workflow that runs on a trigger', async () => {
    const workspace = demoWorkspace('    - { match: "sheet.insert_image", action: ask }');
    const file = workspace.write(
      'workflows/nightly.yaml',
      [
        'name: nightly',
        'on:',
        '  schedule: [{ cron: "0 3 * * *" }]',
        'steps:',
        '  - id: book',
        '    uses: sheet.create_workbook',
        '    with: { path: "${{ run.dir }}/a.xlsx" }',
        '  - id: drop',
        '    uses: sheet.delete_sheet',
        '    with: { path: "${{ steps.book.outputs.path }}", sheet: Sheet1 }',
        '  - id: paste',
        '    uses: sheet.insert_image',
        '    with: { path: "${{ steps.book.outputs.path }}", image: x.png, cell: A1 }',
      ].join('\n'),
    );
    const result = await runInProcess(['check', file], { cwd: workspace.dir, env: SECRETS });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/drop +sheet\.delete_sheet +deny .*rule sheet\*\.delete_sheet.*refused/);
    expect(result.stdout).toMatch(/paste +sheet\.insert_image +ask .*rule sheet\.insert_image; without a terminal: deny\).*refused/);
    expect(result.stdout).toContain('would be refused: nightly/drop, nightly/paste');
    expect(result.stdout).toContain('runs on a trigger');

    // Run by hand, the same ask prompts at the terminal: only the deny rule refuses.
    const manual = workspace.write('manual.yaml', readFileSync(file, 'utf8').replace(/on:\n  schedule: .*\n/, ''));
    const json = await runInProcess(['check', manual, '--json'], { cwd: workspace.dir, env: SECRETS });
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as CheckReport;
    expect(report.denied).toEqual(['nightly/drop']);
    expect(report.workflows[0]!.steps[2]).toMatchObject({ policy: { action: 'ask', rule: 'sheet.insert_image', class: null }, headless: 'deny', denied: false });

    // With approvals that wait, the triggered workflow's ask pauses for `runner approve` instead of being refused.
    workspace.write('runner.config.yaml', readFileSync(workspace.config, 'utf8').replace('policy:\n', 'policy:\n  headless-ask: wait\n'));
    const waits = JSON.parse((await runInProcess(['check', file, '--json'], { cwd: workspace.dir, env: SECRETS })).stdout) as CheckReport;
    expect(waits.denied).toEqual(['nightly/drop']);
    expect(waits.workflows[0]!.steps[2]).toMatchObject({ headless: 'wait', denied: false });
  });

  it('exits 1 naming a step whose app cannot be reached, and 2 for a broken workflow', async () => {
    const workspace = demoWorkspace();
    const down = workspace.write('down.yaml', 'name: down\nsteps:\n  - id: note\n    uses: notes.add\n    with: { text: hi }\n');
    const unreachable = await runInProcess(['check', down, '--json'], { cwd: workspace.dir, env: SECRETS });
    expect(unreachable.code).toBe(1);
    const report = JSON.parse(unreachable.stdout) as CheckReport;
    expect(report.problems).toEqual(['down/note']);
    expect(report.workflows[0]!.steps[0]!.problems[0]).toMatch(/down\.yaml:4:11/);
    expect(report.workflows[0]!.apps.notes!.error).toBeTruthy();

    const broken = workspace.write('broken.yaml', 'name: broken\nsteps:\n  - id: a\n    uses: image.render_text\n    with: { text: "${{ steps.nope.outputs }}" }\n');
    const invalid = await runInProcess(['check', broken], { cwd: workspace.dir, env: SECRETS });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/broken\.yaml:5:\d+/);
    expect(invalid.stdout).toBe('');
  });

  it('reports what changed since runner.lock, worst first, and exits 1 on a change that would stop a run', async () => {
    const write = (readOnlyHint: boolean): ShiftingTool => ({
      name: 'write',
      description: 'Writes a note',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      annotations: { readOnlyHint, openWorldHint: false },
    });
    const workspace = shiftingWorkspace([write(true)]);
    const file = workspace.write('workflows/notes.yaml', 'name: notes\nsteps:\n  - id: write\n    uses: notes.write\n    with: { text: hi }\n');

    const unlocked = await runInProcess(['check', file], { cwd: workspace.dir });
    expect(unlocked.stdout).toContain('lock: no runner.lock, so nothing is pinned');
    expect(unlocked.code).toBe(0);
    expect((await runInProcess(['lock'], { cwd: workspace.dir })).code).toBe(0);
    const clean = JSON.parse((await runInProcess(['check', file, '--json'], { cwd: workspace.dir })).stdout) as CheckReport;
    expect(clean.lock).toEqual({ file: join(workspace.dir, 'runner.lock'), present: true, drifts: [] });

    workspace.setTools([write(false)]);
    const drifted = await runInProcess(['check', file, '--json'], { cwd: workspace.dir });
    expect(drifted.code).toBe(1);
    const report = JSON.parse(drifted.stdout) as CheckReport;
    expect(report.ok).toBe(false);
    expect(report.lock.drifts[0]).toMatchObject({ app: 'notes', tool: 'write', severity: 'less-safe', stops: true });
    const text = await runInProcess(['check', file], { cwd: workspace.dir });
    expect(text.stdout).toMatch(/lock: the tools changed since runner\.lock was written; a run would stop before its first call:\n  notes\.write\n    less safe: readOnlyHint true → false/);
    expect(workspace.calls()).toEqual([]);
  });
});
