import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, faultyArgs } from '../helpers/workspace.js';

// The runner's own tools, `runner.transform` (JSONata) and `runner.save`:
// data shaping between apps, with no app to start.

async function run(steps: string, extra = '') {
  const ws = createWorkspace(`apps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n`);
  const workflow = ws.write('wf.yaml', `name: wf\n${extra}steps:\n${steps}`);
  const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
  const record = JSON.parse(result.stdout);
  const step = (id: string) => record.steps.find((candidate: { id: string }) => candidate.id === id);
  return { ...result, record, step };
}

describe('runner.transform', () => {
  it('turns records into rows for the next step, as outputs and as JSON text', async () => {
    const { code, step } = await run(
      '  - id: rows\n    uses: runner.transform\n    with:\n      input: ${{ inputs.items }}\n      expression: "$.[category, value]"\n' +
        '  - id: echo\n    uses: faulty.echo\n    with: { text: "${{ toJSON(steps.rows.outputs[1]) }}" }\n',
      'inputs:\n  items: { type: array, default: [{ category: tea, value: 3 }, { category: "milk, whole", value: 1.5 }] }\n',
    );
    expect(code).toBe(0);
    expect(step('rows')).toMatchObject({ status: 'succeeded', policy: 'allow', outputs: [['tea', 3], ['milk, whole', 1.5]] });
    expect(JSON.parse(step('rows').text)).toEqual([['tea', 3], ['milk, whole', 1.5]]);
    expect(JSON.parse(step('echo').text)).toEqual(['milk, whole', 1.5]);
  });

  it('fails as input with the position of a syntax error, and as timeout when it runs past the step timeout', async () => {
    const { step } = await run(
      // Written through an input: a literal expression that does not parse is stopped by validate, before the run.
      "  - id: syntax\n    uses: runner.transform\n    with: { expression: '${{ inputs.broken }}' }\n    continue-on-error: true\n" +
        "  - id: endless\n    uses: runner.transform\n    timeout: 1s\n    with: { expression: '$sum([1..10000000].([1..10000000] ~> $sum()))' }\n    continue-on-error: true\n" +
        "  - id: after\n    uses: runner.transform\n    needs: [endless]\n    with: { input: 21, expression: '$ * 2' }\n",
      "inputs:\n  broken: { default: '$.[a, ' }\n",
    );
    expect(step('syntax').error).toEqual({ kind: 'input', message: 'runner.transform: Expected "]" before end of expression at character 6 in `$.[a, `', outcome: 'not-sent' });
    expect(step('endless').error).toMatchObject({ kind: 'timeout', message: 'runner.transform did not finish within 1s (timeout)' });
    expect(step('after')).toMatchObject({ status: 'succeeded', outputs: 42 }); // a new thread took over
  });
});

describe('runner.save', () => {
  it('writes text, JSON and CSV files named by the step into its folder, listed in files', async () => {
    const { code, step, record } = await run(
      '  - id: notes\n    uses: runner.save\n    with: { name: notes.txt, content: "line 1\\nline 2" }\n' +
        '  - id: data\n    uses: runner.save\n    with: { name: data.json, content: { a: [1, 2] } }\n' +
        '  - id: table\n    uses: runner.save\n    with:\n      name: table.csv\n      content: [{ item: "tea", note: \'says "hi"\' }, { item: "milk, whole", qty: 2 }]\n',
    );
    expect(code).toBe(0);
    const dir = record.dir as string;
    expect(step('notes')).toMatchObject({ files: [join(dir, 'notes', 'notes.txt')], outputs: { path: join(dir, 'notes', 'notes.txt'), bytes: 13 } });
    expect(readFileSync(join(dir, 'notes', 'notes.txt'), 'utf8')).toBe('line 1\nline 2');
    expect(JSON.parse(readFileSync(join(dir, 'data', 'data.json'), 'utf8'))).toEqual({ a: [1, 2] });
    expect(readFileSync(join(dir, 'table', 'table.csv'), 'utf8')).toBe('item,note,qty\ntea,"says ""hi""",\n"milk, whole",,2\n');
  });

  it('refuses a name that would leave the step folder or replace result.json, and rows that are not rows', async () => {
    const { step } = await run(
      '  - id: escape\n    uses: runner.save\n    with: { name: ../../evil.txt, content: x }\n    continue-on-error: true\n' +
        '  - id: record\n    uses: runner.save\n    with: { name: result.json, content: x }\n    continue-on-error: true\n' +
        '  - id: rows\n    uses: runner.save\n    with: { name: t.csv, content: [[1], 2] }\n    continue-on-error: true\n',
    );
    expect(step('escape').error.kind).toBe('input');
    expect(step('escape').error.message).toContain('expected a plain file name');
    expect(step('record').error.message).toContain("`result.json` is the step's own record");
    expect(step('rows').error.message).toBe('runner.save: CSV needs every row to be a list of cells (or every row a record); row 1 is number');
  });
});
