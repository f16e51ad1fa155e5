import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, demoAppsYaml, repoRoot, runCli } from '../helpers/workspace.js';

const policy = `policy:\n  rules:\n    - { match: "sheet.write_range", action: allow }\n`;

describe('runner run workflows/logo-to-quote.yaml', () => {
  it('renders the logo, builds the workbook with the logo at B2 and a total, and records everything', async () => {
    const ws = createWorkspace(demoAppsYaml() + policy);
    const result = await runInProcess(['--config', ws.config, 'run', join(repoRoot, 'workflows', 'logo-to-quote.yaml'), '--json', '-i', 'company=Globex'], { cwd: ws.dir });
    expect(result.stderr).toContain('readback succeeded');
    expect(result.code).toBe(0);

    const record = JSON.parse(result.stdout);
    expect(record.status).toBe('succeeded');
    expect(record.workflow).toBe('logo-to-quote');
    expect(record.inputs.company).toBe('Globex');
    expect(record.steps.map((step: { status: string }) => step.status)).toEqual(Array(record.steps.length).fill('succeeded'));
    expect(record.apps.image).toEqual({ protocolVersion: '2026-07-28', server: { name: 'image', version: '1.0.0' } });
    expect(record.apps.sheet.protocolVersion).toBe('2026-07-28');

    // run.json on disk is the same final record.
    const runDir = join(ws.artifacts, 'logo-to-quote', record.id);
    expect(JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'))).toEqual(record);

    // Every step has a folder with result.json; image content was saved as a file, not kept inline.
    for (const step of record.steps) expect(existsSync(join(runDir, step.id, 'result.json'))).toBe(true);
    const preview = record.steps.find((step: { id: string }) => step.id === 'preview');
    expect(preview.files).toHaveLength(1);
    expect(preview.files[0].startsWith(join(runDir, 'preview'))).toBe(true);
    expect(readFileSync(preview.files[0]).subarray(1, 4).toString()).toBe('PNG');
    const stored = JSON.parse(readFileSync(join(runDir, 'preview', 'result.json'), 'utf8'));
    const imageBlock = stored.content.find((block: { type: string }) => block.type === 'image');
    expect(imageBlock.data).toBeUndefined();
    expect(imageBlock.file).toMatch(/\.png$/);

    // The stderr of each app went to the run's log folder, not to stdout.
    expect(readdirSync(join(runDir, 'logs')).sort()).toEqual(['image.log', 'sheet.log']);

    // The workbook: the logo anchored at B2, the totals formula, the line items.
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(join(runDir, 'quote.xlsx'));
    const sheet = workbook.getWorksheet('Quote')!;
    const images = sheet.getImages();
    expect(images).toHaveLength(1);
    expect(images[0]!.range.tl.nativeCol).toBe(1);
    expect(images[0]!.range.tl.nativeRow).toBe(1);
    expect(sheet.getCell('C7').formula).toBe('SUMPRODUCT(B10:B200,C10:C200)');
    expect(sheet.getCell('A10').value).toBe('Launch pad rental');
    expect(String(sheet.getCell('A1').value)).toContain('Quote for Globex');

    // read_range read it back.
    const readback = record.steps.find((step: { id: string }) => step.id === 'readback');
    expect(readback.outputs.values[6][2]).toBe('=SUMPRODUCT(B10:B200,C10:C200)');
  });

  it('exits 2 with file:line:col and runs nothing when the workflow is broken', async () => {
    const ws = createWorkspace(demoAppsYaml());
    const file = ws.write('broken.yaml', 'name: broken\nsteps:\n  - id: a\n    uses: image.info\n    with: { path: x }\n    needz: [b]\n');
    // A real process: exit 2 as the shell sees it, the message on the real stderr.
    const result = await runCli(['--config', ws.config, 'run', file], { cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}:6:5`);
    expect(result.stderr).toContain('needz');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(ws.artifacts, 'broken'))).toBe(false);
  });

  it('sheet app: add_sheet refuses a duplicate, delete_sheet removes one (destructive, allowed by config)', async () => {
    const ws = createWorkspace(demoAppsYaml() + 'policy:\n  destructive: allow\n');
    const file = ws.write(
      'sheets.yaml',
      [
        'name: sheets',
        'steps:',
        '  - { id: c, uses: sheet.create_workbook, with: { path: "${{ run.dir }}/w.xlsx" } }',
        '  - { id: a, uses: sheet.add_sheet, with: { path: "${{ steps.c.outputs.path }}", name: Two } }',
        '  - { id: dup, uses: sheet.add_sheet, needs: [a], continue-on-error: true, with: { path: "${{ steps.c.outputs.path }}", name: Two } }',
        '  - { id: d, uses: sheet.delete_sheet, needs: [dup], with: { path: "${{ steps.c.outputs.path }}", name: Sheet1 } }',
        '',
      ].join('\n'),
    );
    const result = await runInProcess(['--config', ws.config, 'run', file, '--json'], { cwd: ws.dir });
    expect(result.code).toBe(0);
    const steps = Object.fromEntries(JSON.parse(result.stdout).steps.map((step: { id: string }) => [step.id, step]));
    expect(steps.a.outputs.sheets).toEqual(['Sheet1', 'Two']);
    expect(steps.dup).toMatchObject({ status: 'failed', error: { kind: 'tool' } });
    expect(steps.dup.error.message).toContain('already exists');
    expect(steps.d.outputs.sheets).toEqual(['Two']);
  });
});

describe('runner run workflows/image-inventory.yaml', () => {
  it('chains the image app, runner.transform and the sheet app: one row per banner in the workbook, and the same rows as CSV', async () => {
    const ws = createWorkspace(demoAppsYaml() + policy);
    const result = await runInProcess(['--config', ws.config, 'run', join(repoRoot, 'workflows', 'image-inventory.yaml'), '--json', '-i', 'products=["Alpha","Beta, the second"]'], {
      cwd: ws.dir,
    });
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout);
    const step = (id: string) => record.steps.find((candidate: { id: string }) => candidate.id === id);
    expect(step('rows')).toMatchObject({ status: 'succeeded', policy: 'allow' });
    const runDir = join(ws.artifacts, 'image-inventory', record.id);

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(join(runDir, 'inventory.xlsx'));
    const sheet = workbook.getWorksheet('Banners')!;
    const row = (n: number) => (sheet.getRow(n).values as unknown[]).slice(1);
    expect(row(3)).toEqual(['Product', 'Width', 'Height', 'Format', 'Bytes']);
    expect(row(4).slice(0, 4)).toEqual(['Alpha', 360, 120, 'png']);
    expect(row(5).slice(0, 4)).toEqual(['Beta, the second', 360, 120, 'png']);
    // The bytes column holds what the image app measured, which is the size of each banner file.
    const banners = step('banners').outputs as { path: string }[];
    expect([row(4)[4], row(5)[4]]).toEqual(banners.map((banner) => readFileSync(banner.path).length));
    expect(sheet.getCell('E2').formula).toBe('SUM(E4:E200)');
    expect(row(6)).toEqual([]);

    expect(step('csv').files).toEqual([join(runDir, 'csv', 'inventory.csv')]);
    expect(readFileSync(join(runDir, 'csv', 'inventory.csv'), 'utf8')).toBe(`Alpha,360,120,png,${row(4)[4]}\n"Beta, the second",360,120,png,${row(5)[4]}\n`);

    // One product is still one row (a list of one row, not the row itself).
    const one = await runInProcess(['--config', ws.config, 'run', join(repoRoot, 'workflows', 'image-inventory.yaml'), '--json', '-i', 'products=["Solo"]'], { cwd: ws.dir });
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout).steps.find((candidate: { id: string }) => candidate.id === 'rows').outputs).toEqual([['Solo', 360, 120, 'png', expect.any(Number)]]);
  });
});
