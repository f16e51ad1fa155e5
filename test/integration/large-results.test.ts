import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFaulty } from '../helpers/faulty-workspace.js';
import { runInProcess } from '../helpers/in-process.js';

// A result of several MB is written in slices (run.json, result.json) and kept
// out of line in the run store: each copy must still hold all of it, and a
// resume must hand it to later steps exactly as the app returned it.

const BYTES = 3_000_000;
const text = 'x'.repeat(BYTES);

describe('a result of 3 MB', () => {
  it('is kept whole in run.json, result.json, `runs show` and across a resume', async () => {
    const run = await runFaulty(
      `  - id: a\n    uses: faulty.big\n    with: { bytes: ${BYTES} }\n` +
        '  - id: b\n    uses: faulty.echo\n    needs: [a]\n    with: { text: "${{ steps.a.text }}" }\n' +
        '  - id: c\n    uses: faulty.crash_once\n    needs: [b]\n' +
        '  - id: d\n    uses: faulty.echo\n    needs: [c]\n    with: { text: "${{ steps.a.text }}!" }\n',
    );
    expect(run.record.steps.map((step: { status: string }) => step.status)).toEqual(['succeeded', 'succeeded', 'failed', 'skipped']);
    expect(run.step('a').text === text).toBe(true);
    expect(run.step('b').text === text).toBe(true); // passed on through an expression

    const dir = run.record.dir as string;
    const onDisk = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    expect(onDisk.steps[0].text === text && onDisk.steps[1].args.text === text).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'a', 'result.json'), 'utf8')).content[0].text === text).toBe(true);

    const cli = (...args: string[]) => runInProcess(['--config', run.ws.config, ...args], { cwd: run.ws.dir });
    const shown = JSON.parse((await cli('runs', 'show', run.record.id, '--json')).stdout);
    expect(shown.steps[0].text === text && shown.steps[1].outputs.text === text).toBe(true);

    const resumed = await cli('resume', run.record.id, '--json');
    expect(resumed.code).toBe(0);
    const record = JSON.parse(resumed.stdout);
    expect(record.steps.map((step: { status: string }) => step.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(record.steps[0].text === text && record.steps[1].text === text).toBe(true);
    expect(record.steps[3].text === `${text}!`).toBe(true); // the kept step's text, read back from the store, fed the new one
    const again = JSON.parse((await cli('runs', 'show', run.record.id, '--json')).stdout);
    expect(again.steps[3].text === `${text}!` && again.steps[0].text === text).toBe(true);
  }, 60_000);
});
