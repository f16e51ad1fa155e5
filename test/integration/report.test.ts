import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, demoAppsYaml, repoRoot } from '../helpers/workspace.js';

const policy = `policy:\n  rules:\n    - { match: "sheet.write_range", action: allow }\n`;

describe('report.html', () => {
  it('is written when a run ends, and `runner report latest` rewrites it and prints its path', async () => {
    const ws = createWorkspace(demoAppsYaml() + policy);
    const result = await runInProcess(['--config', ws.config, 'run', join(repoRoot, 'workflows', 'logo-to-quote.yaml'), '--json'], { cwd: ws.dir });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('warning:');
    const record = JSON.parse(result.stdout);
    const report = join(ws.artifacts, 'logo-to-quote', record.id, 'report.html');
    const html = readFileSync(report, 'utf8');
    for (const step of record.steps) expect(html).toContain(`data-step="${step.id}" data-status="succeeded"`);
    expect(html).toContain('2026-07-28'); // the apps' protocol version
    expect(html).toContain('href="logs/image.log"');
    expect(html).toMatch(/<a href="preview\/[^"]+\.png" class="thumb"><img src="data:image\/png;base64,/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);

    rmSync(report);
    const again = await runInProcess(['--config', ws.config, 'report', 'latest'], { cwd: ws.dir });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`${report}\n`);
    expect(statSync(report).size).toBeGreaterThan(1000);
    const prefix = await runInProcess(['--config', ws.config, 'report', record.id.slice(0, 15)], { cwd: ws.dir });
    expect(prefix.stdout).toBe(`${report}\n`);
  });

  it('is written for a failed run too, with the error; an unknown run id exits 2 with a hint', async () => {
    const ws = createWorkspace(demoAppsYaml());
    const file = ws.write('broken.yaml', 'name: broken\nsteps:\n  - { id: missing, uses: image.info, with: { path: "${{ run.dir }}/nope.png" } }\n  - { id: after, uses: image.info, needs: [missing], with: { path: x } }\n');
    const result = await runInProcess(['--config', ws.config, 'run', file, '--json'], { cwd: ws.dir });
    expect(result.code).toBe(1);
    const record = JSON.parse(result.stdout);
    const html = readFileSync(join(record.dir, 'report.html'), 'utf8');
    expect(html).toContain('data-step="missing" data-status="failed"');
    expect(html).toContain('data-step="after" data-status="skipped"');
    expect(html).toContain(`error [${record.steps[0].error.kind}]`);

    const unknown = await runInProcess(['--config', ws.config, 'report', '99999999'], { cwd: ws.dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no run `99999999`');
    expect(unknown.stderr).toContain('hint: list runs with `runner runs`');
    expect(existsSync(join(ws.artifacts, 'broken', '99999999'))).toBe(false);
  });
});
