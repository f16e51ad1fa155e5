import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, demoAppsYaml } from '../helpers/workspace.js';

// The commonest workflow mistakes, each caught by `runner validate` before
// anything runs, at the file:line:col of the offending expression (its `${{`,
// or the name itself in a bare `if:`), with a hint. Warnings exit 0 and
// count as problems with --strict.

// Lines 1-11 of every case; a case's own lines start at line 12.
const HEADER = [
  'name: wf',
  'inputs:',
  '  company: { type: string, default: Acme }',
  '  flag: { type: boolean, default: false }',
  '  images: { type: array, default: [] }',
  'steps:',
  '  - id: logo',
  '    uses: image.render_text',
  '    with: { text: Acme, out: logo.png }',
  '  - id: b',
  '    uses: image.info',
];

interface Case {
  name: string;
  lines: string[];
  /** Where the problem is reported (line:col). */
  at: string;
  /** Part of the message, then part of the hint. */
  says: string;
  hint?: string;
  warning?: boolean;
}

const errors: Case[] = [
  { name: 'an undeclared input in with', lines: ['    with: { path: "${{ inputs.compnay }}" }'], at: '12:20', says: '`inputs.compnay` is not a declared input', hint: 'did you mean `inputs.company`? declared inputs: company, flag, images' },
  { name: 'an undeclared input deep in nested with lists', lines: ['    with:', '      path: x.png', '      rows: [[a, { cell: "${{ inputs.cmpany }}" }]]'], at: '14:27', says: '`with.rows[0][1].cell` of step `b`: `inputs.cmpany`', hint: 'did you mean `inputs.company`?' },
  { name: 'an undeclared input in a bare if', lines: ['    if: inputs.flga == true'], at: '12:9', says: '`if` of step `b`: `inputs.flga` is not a declared input', hint: 'did you mean `inputs.flag`?' },
  { name: 'an undeclared input in a wrapped if', lines: ["    if: ${{ inputs.flga && steps.logo.status == 'succeeded' }}"], at: '12:9', says: '`inputs.flga`', hint: 'did you mean `inputs.flag`?' },
  { name: 'an undeclared input in foreach', lines: ['    foreach: ${{ inputs.imgs }}', '    with: { path: "${{ item }}" }'], at: '12:14', says: '`foreach` of step `b`: `inputs.imgs`', hint: 'did you mean `inputs.images`?' },
  { name: 'an undeclared input in elicit', lines: ['    elicit: { answer: "${{ inputs.anser }}" }'], at: '12:24', says: '`elicit.answer` of step `b`: `inputs.anser`', hint: 'declare it under `inputs:`' },
  { name: 'an undeclared input on the second line of a block string', lines: ['    with:', '      path: |', '        first line', '        second ${{ inputs.company }} then ${{ inputs.compny }}'], at: '15:43', says: '`inputs.compny`', hint: 'did you mean `inputs.company`?' },
  { name: 'an undeclared input in a folded block string', lines: ['    with:', '      path: >-', '        first line', '        and ${{ inputs.comapny }}'], at: '15:13', says: '`inputs.comapny`', hint: 'did you mean `inputs.company`?' },
  { name: 'an undeclared input in a double-quoted string with an escape', lines: ['    with: { path: "a\\tb ${{ inputs.compan }}" }'], at: '12:25', says: '`inputs.compan`' },
  { name: 'the second of two expressions in one string', lines: ['    with: { path: "${{ inputs.company }}/${{ inputs.compay }}.png" }'], at: '12:42', says: '`inputs.compay`' },
  { name: 'an unknown step', lines: ['    with: { path: "${{ steps.lgo.outputs.path }}" }'], at: '12:20', says: 'refers to step `lgo`, which does not exist', hint: 'did you mean `logo`?' },
  { name: 'a step property that does not exist', lines: ['    with: { path: "${{ steps.logo.output.path }}" }'], at: '12:20', says: '`steps.logo.output` is not a property of a step', hint: 'did you mean `steps.logo.outputs`?' },
  { name: "a wrong property after steps['id']", lines: ["    with: { path: \"${{ steps['logo'].otputs.path }}\" }"], at: '12:20', says: '`steps.logo.otputs` is not a property of a step', hint: 'did you mean `steps.logo.outputs`?' },
  { name: 'a property of files, which is a list', lines: ['    with: { path: "${{ steps.logo.files.length }}" }'], at: '12:20', says: '`steps.logo.files.length` reads a property of `files`', hint: 'steps.logo.files[0]' },
  { name: 'a wrong step property in a bare if', lines: ["    if: steps.logo.stauts == 'succeeded'"], at: '12:9', says: '`steps.logo.stauts`', hint: 'did you mean `steps.logo.status`?' },
  { name: 'an unknown context', lines: ['    with: { path: "${{ github.sha }}" }'], at: '12:20', says: "Unrecognized named-value: 'github'", hint: 'contexts are inputs, env, run, workflow, trigger, steps, item, index' },
  { name: 'an unknown function', lines: ['    with: { path: "${{ lenght(inputs.company) }}" }'], at: '12:20', says: "Unrecognized function: 'lenght'", hint: 'functions are case(), contains(), endsWith()' },
  { name: 'a misspelt function', lines: ["    with: { path: \"${{ startWith(inputs.company, 'A') }}\" }"], at: '12:20', says: "Unrecognized function: 'startWith'", hint: 'did you mean `startsWith()`?' },
  { name: 'a status function outside if', lines: ['    with: { path: "${{ success() }}" }'], at: '12:20', says: "Unrecognized function: 'success'", hint: 'work only in if:' },
  { name: 'item outside foreach', lines: ['    with: { path: "${{ item }}" }'], at: '12:20', says: '`item` is set only in a step with `foreach`', hint: 'add `foreach:' },
  { name: 'index outside foreach', lines: ['    with: { path: "x-${{ index }}.png" }'], at: '12:22', says: '`index` is set only in a step with `foreach`' },
  { name: "item in a foreach step's if", lines: ['    foreach: ${{ inputs.images }}', "    if: item != ''", '    with: { path: "${{ item }}" }'], at: '13:9', says: '`item` is not set in `if`' },
  { name: 'item in foreach itself', lines: ['    foreach: ${{ item }}'], at: '12:14', says: '`item` is not set in `foreach` itself' },
  { name: 'a property of run that does not exist', lines: ['    with: { path: "${{ run.dirr }}/x.png" }'], at: '12:20', says: '`run.dirr` does not exist', hint: 'did you mean `run.dir`?' },
  { name: 'a property of workflow that does not exist', lines: ['    with: { path: "${{ workflow.nam }}" }'], at: '12:20', says: '`workflow.nam` does not exist', hint: 'did you mean `workflow.name`?' },
  { name: 'a property of trigger that does not exist', lines: ['    with: { path: "${{ trigger.pth }}" }'], at: '12:20', says: '`trigger.pth` does not exist', hint: 'did you mean `trigger.path`?' },
  { name: 'an unterminated ${{', lines: ['    with: { path: "a ${{ inputs.company" }'], at: '12:22', says: 'Unterminated ${{: no closing }}' },
  { name: 'a syntax error', lines: ['    with: { path: "${{ inputs.company == }}" }'], at: '12:20', says: "Unexpected end of expression: '==' in `${{ inputs.company == }}`" },
  { name: 'an empty expression', lines: ['    with: { path: "${{ }}" }'], at: '12:20', says: 'Empty expression' },
  { name: 'a step reading itself', lines: ['    with: { path: "${{ steps.b.outputs.path }}" }'], at: '12:20', says: 'refers to its own step `b`' },
  { name: 'text around ${{ }} in if', lines: ['    if: ${{ inputs.flag }} && ${{ inputs.flag }}'], at: '12:9', says: 'always true' },
  { name: 'a JSONata expression that does not parse', lines: ['  - id: t', '    uses: runner.transform', "    with: { input: 1, expression: '$.[a, ' }"], at: '14:41', says: 'JSONata syntax error at character 6: Expected "]" before end of expression' },
  { name: 'an unknown built-in tool', lines: ['  - id: c', '    uses: runner.trasform'], at: '13:11', says: '`runner` has no built-in tool `trasform`', hint: 'did you mean `transform`? built-in tools: transform, save' },
  { name: 'a misspelt argument of a built-in tool', lines: ['  - id: s', '    uses: runner.save', '    with: { name: a.txt, content: x, fromat: text }'], at: '14:38', says: 'step `s`: unknown argument `fromat`', hint: 'did you mean `format`? arguments: name, content, format' },
  { name: 'a missing argument of a built-in tool', lines: ['  - id: t', '    uses: runner.transform', '    with: { input: "${{ inputs.images }}" }'], at: '14:5', says: 'step `t`: missing required argument `expression`', hint: 'required: expression' },
];

const warnings: Case[] = [
  { name: '{{ }} without $', lines: ['    with: { path: "{{ inputs.company }}.png" }'], at: '12:20', says: '`{{ inputs.company }}` has no `$`, so it is sent as the literal text', hint: 'expressions are written `${{ inputs.company }}`' },
  { name: 'an env variable that is not set', lines: ['    with: { path: "${{ env.RUNNER_CHECKS_UNSET }}" }'], at: '12:20', says: '`env.RUNNER_CHECKS_UNSET` is not set in the environment', hint: "${{ env.RUNNER_CHECKS_UNSET || 'default' }}" },
  { name: '${{ }} in a key, which is not evaluated', lines: ['    with: { path: x.png, "${{ inputs.company }}": 1 }'], at: '12:26', says: 'the key `${{ inputs.company }}` is sent as written' },
  { name: "a status GitHub Actions has but runner does not ('success')", lines: ["    if: steps.logo.status == 'success'"], at: '12:9', says: "`steps.logo.status` is never `success`, so `== 'success'` is always false", hint: 'did you mean `succeeded`?' },
  {
    name: "a named field of a foreach step's outputs (a list)",
    lines: ['  - id: fan', '    uses: image.info', '    foreach: ${{ inputs.images }}', '    with: { path: "${{ item }}" }', '  - id: after', '    uses: image.info', '    with: { path: "${{ steps.fan.outputs.path }}" }'],
    at: '18:20',
    says: 'step `fan` has `foreach`: its outputs is a list',
    hint: '`steps.fan.outputs[0].path`',
  },
].map((entry) => ({ ...entry, warning: true }));

const offline = createWorkspace('apps:\n  image: { command: node }\n  sheet: { command: node }\n');
let files = 0;
const writeCase = (lines: string[]) => offline.write(`case-${++files}.yaml`, [...HEADER, ...lines, ''].join('\n'));
const validate = (args: string[], env?: NodeJS.ProcessEnv) => runInProcess(['--config', offline.config, 'validate', ...args], { cwd: offline.dir, env });

describe.concurrent('runner validate: a mistake in an expression is an error at the expression', () => {
  it('has a corpus of more than 30 mistakes', () => {
    expect(errors.length + warnings.length).toBeGreaterThanOrEqual(30);
  });

  it.each(errors)('$name ($at)', async ({ lines, at, says, hint }) => {
    const file = writeCase(lines);
    const result = await validate([file]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`${file}:${at}: `);
    const reported = result.stderr.split(`${file}:${at}: `)[1]!;
    expect(reported.split('\n')[0]).toContain(says);
    if (hint) expect(reported).toMatch(new RegExp(`^.*\\n  hint: .*${escapeRegExp(hint)}`));
    expect(result.stderr).not.toContain('    at '); // no stack trace
  });
});

describe.concurrent('runner validate: a likely mistake is a warning (exit 0), a problem with --strict (exit 2)', () => {
  it.each(warnings)('$name ($at)', async ({ lines, at, says, hint }) => {
    const file = writeCase(lines);
    const result = await validate([file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`ok ${file} (`);
    const reported = result.stderr.split(`warning: ${file}:${at}: `)[1];
    expect(reported, result.stderr).toBeDefined();
    expect(reported!.split('\n')[0]).toContain(says);
    if (hint) expect(reported).toMatch(new RegExp(`^.*\\n  hint: .*${escapeRegExp(hint)}`));

    const strict = await validate(['--strict', file]);
    expect(strict.code).toBe(2);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toContain(`warning: ${file}:${at}: `);
    expect(strict.stderr).toMatch(/\d+ problems? found \(warnings count with --strict\)/);
  });

  it('says nothing about an env variable that is set, or that has a fallback', async () => {
    const file = writeCase(['    with:', '      path: "${{ env.RUNNER_CHECKS_SET }}"', "      out: \"${{ env.RUNNER_CHECKS_UNSET || 'x' }}\"", '    if: env.RUNNER_CHECKS_UNSET']);
    const result = await validate(['--strict', file], { RUNNER_CHECKS_SET: 'yes' });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('prints workflow warnings before a run, and the run goes on', async () => {
    const ws = createWorkspace(demoAppsYaml());
    const file = ws.write('wf.yaml', ['name: wf', 'steps:', '  - id: a', '    uses: image.info', '    with: { path: "{{ x }}" }', ''].join('\n'));
    const result = await runInProcess(['--config', ws.config, 'run', file, '--json'], { cwd: ws.dir });
    expect(result.stderr).toContain(`warning: ${file}:5:20: \`with.path\` of step \`a\`: \`{{ x }}\` has no \`$\``);
    expect(JSON.parse(result.stdout).steps[0].args).toEqual({ path: '{{ x }}' }); // it ran, sending the text as written
  });

  it('refuses to run a workflow with an error in an expression, exit 2, nothing run', async () => {
    const file = writeCase(['    with: { path: "${{ inputs.compnay }}" }']);
    const result = await runInProcess(['--config', offline.config, 'run', file], { cwd: offline.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}:12:20: \`with.path\` of step \`b\`: \`inputs.compnay\` is not a declared input`);
  });
});

describe('runner validate --json', () => {
  it('prints every diagnostic of every file as one JSON document, exit 2 on an error', async () => {
    const bad = writeCase(['    with:', '      path: "${{ inputs.compnay }}"', '      out: "{{ inputs.company }}"']);
    const good = writeCase(['    with: { path: "${{ inputs.company }}.png" }']);
    const result = await validate(['--json', bad, good]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      ok: false,
      strict: false,
      online: false,
      errors: 1,
      warnings: 1,
      files: [
        { file: bad, ok: false, name: null, steps: null, errors: 1, warnings: 1 },
        { file: good, ok: true, name: 'wf', steps: 2, errors: 0, warnings: 0 },
      ],
      diagnostics: [
        {
          file: bad,
          line: 13,
          column: 14,
          severity: 'error',
          message: '`with.path` of step `b`: `inputs.compnay` is not a declared input, so it would always be empty',
          hint: 'did you mean `inputs.company`? declared inputs: company, flag, images',
        },
        {
          file: bad,
          line: 14,
          column: 13,
          severity: 'warning',
          message: '`with.out` of step `b`: `{{ inputs.company }}` has no `$`, so it is sent as the literal text `{{ inputs.company }}`',
          hint: 'expressions are written `${{ inputs.company }}`',
        },
      ],
    });
  });

  it('exits 0 on warnings alone, 2 with --strict; a missing file is a diagnostic without a position', async () => {
    const warned = writeCase(['    with: { path: "{{ x }}" }']);
    const lenient = await validate(['--json', warned]);
    expect(lenient.code).toBe(0);
    expect(JSON.parse(lenient.stdout)).toMatchObject({ ok: true, errors: 0, warnings: 1, files: [{ file: warned, ok: true, name: 'wf', steps: 2 }] });

    const strict = await validate(['--json', '--strict', warned]);
    expect(strict.code).toBe(2);
    expect(JSON.parse(strict.stdout)).toMatchObject({ ok: false, strict: true, files: [{ ok: false, warnings: 1 }] });

    const missing = `${offline.dir}/nope.yaml`;
    const gone = await validate(['--json', missing]);
    expect(gone.code).toBe(2);
    expect(JSON.parse(gone.stdout).diagnostics).toEqual([
      { file: missing, line: null, column: null, severity: 'error', message: `workflow file \`${missing}\` does not exist`, hint: null },
    ]);
  });

  it('reports a broken config as JSON too', async () => {
    const ws = createWorkspace('apps:\n  image: { comand: node }\n');
    const file = ws.write('wf.yaml', 'name: wf\nsteps:\n  - { id: a, uses: image.info }\n');
    const result = await runInProcess(['--config', ws.config, 'validate', '--json', file], { cwd: ws.dir });
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ ok: false, files: [] });
    expect(report.diagnostics[0]).toMatchObject({ line: 3, severity: 'error', message: expect.stringContaining('`command`') });
  });
});

describe('runner validate --online and run --dry-run: types between steps, against the apps\' schemas', () => {
  const online = createWorkspace(demoAppsYaml());
  const flow = online.write(
    'flow.yaml',
    [
      'name: flow', //                                             1
      'inputs:',
      '  label: { type: string, default: "10" }',
      '  n: { type: integer, default: 3 }',
      'steps:', //                                                 5
      '  - id: a',
      '    uses: image.info',
      '    with: { path: x.png }',
      '  - id: b',
      '    uses: image.resize', //                                 10
      '    with:',
      '      path: ${{ steps.a.outputs.path }}',
      '      width: ${{ steps.a.outputs.format }}',
      '      height: ${{ inputs.label }}',
      '      colour: red', //                                      15
      '  - id: c',
      '    uses: image.resze',
      '    with: { path: x.png }',
      '  - id: d',
      '    uses: image.render_text', //                            20
      '    with:',
      '      text: ${{ steps.a.outputs.width }}',
      '      out: "${{ steps.a.outputs.widht }}"',
      '      width: "w${{ inputs.n }}"',
      '      height: ${{ inputs.n }}', //                          25
      '  - id: e',
      '    uses: runner.save',
      '    with: { name: a.txt, content: x, format: text }',
      '  - id: f',
      '    uses: image.resize', //                                 30
      '    if: steps.a.outputs.hieght > 3',
      '    with: { path: x.png, width: 5 }',
      '',
    ].join('\n'),
  );

  it('checks output fields, argument types, unknown arguments and tool names, each at its place', async () => {
    const result = await runInProcess(['--config', online.config, 'validate', '--online', flow], { cwd: online.dir });
    expect(result.code).toBe(2);
    const lines = result.stderr.split('\n');
    const at = (where: string) => lines.findIndex((line) => line.startsWith(`${flow}:${where}: `));
    const said = (where: string) => `${lines[at(where)]}\n${lines[at(where) + 1]}`;
    expect(said('13:14')).toContain('step `b`: `with.width` is a string (`${{ steps.a.outputs.format }}`), but the inputSchema of image.resize wants an integer there');
    expect(said('14:15')).toContain('`with.height` is a string (`${{ inputs.label }}`), but the inputSchema of image.resize wants an integer');
    expect(said('15:7')).toContain('step `b`: unknown argument `colour`\n  hint: arguments: path, out, width, height, fit');
    expect(said('17:11')).toContain('step `c`: app `image` has no tool `resze`\n  hint: did you mean `resize`? tools: render_text, resize');
    expect(said('23:13')).toContain('step `d`: `steps.a.outputs.widht`: the outputSchema of image.info (step `a`) has no field `widht`\n  hint: did you mean `width`? its fields: path, width, height, format, bytes, channels');
    expect(said('24:16')).toContain('`with.width` is a string (`w${{ inputs.n }}`), but the inputSchema of image.render_text wants an integer there\n  hint: text around ${{ }} makes the value a string');
    expect(said('31:9')).toContain('`steps.a.outputs.hieght`: the outputSchema of image.info (step `a`) has no field `hieght`');
    // A number into a string argument is passed as its string form: not a problem.
    expect(result.stderr).not.toContain(':22:');
    expect(result.stderr).not.toContain(':28:');
    expect(result.stderr).toContain('7 problems found');
  });

  it('shows the same in the dry-run plan, and plans runner.* tools as built-in, allowed, without an app', async () => {
    const result = await runInProcess(['--config', online.config, 'run', flow, '--dry-run', '--json'], { cwd: online.dir });
    expect(result.code).toBe(1);
    const plan = JSON.parse(result.stdout);
    const byId = Object.fromEntries(plan.steps.map((step: { id: string }) => [step.id, step]));
    expect(byId.c.problems).toEqual([`${flow}:17:11: app \`image\` has no tool \`resze\` (did you mean \`resize\`? tools: render_text, resize, crop, convert, info, thumbnail)`]);
    expect(byId.e).toMatchObject({ policy: { action: 'allow', reason: 'built-in' }, retry: { safe: true, why: 'read-only' } });
    expect(byId.e.diagnostics).toEqual([]);
    expect(Object.keys(plan.apps)).toEqual(['image']);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
