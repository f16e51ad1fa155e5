import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { RunnerConfig } from '../../src/config/types.js';
import { formatDiagnostic, RunnerError } from '../../src/errors.js';
import { readInputsFile, resolveInputs } from '../../src/workflow/inputs.js';
import { loadWorkflow, locateStepKey, parseWorkflowText } from '../../src/workflow/load.js';

let dir: string;
let config: RunnerConfig;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'runner-workflow-'));
  await writeFile(join(dir, 'runner.config.yaml'), 'apps:\n  image: { command: node }\n  sheet: { command: node }\n');
  config = await loadConfig({ cwd: dir, env: {} });
});

/** The formatted diagnostics of the RunnerError `run` throws. */
function problemsOf(run: () => unknown, code = 'workflow'): string[] {
  try {
    run();
  } catch (error) {
    if (!(error instanceof RunnerError)) throw error;
    expect(error.code).toBe(code);
    return error.diagnostics.map(formatDiagnostic);
  }
  throw new Error('expected a RunnerError');
}

const parse = (text: string) => parseWorkflowText(text, 'wf.yaml', config);
const lines = (...text: string[]) => `${text.join('\n')}\n`;

describe('parseWorkflowText: normalization', () => {
  const text = lines(
    'name: logo-to-quote',
    'on:',
    '  watch: { paths: ["artifacts/inbox/*.png"] }',
    '  schedule:',
    '    - cron: "0 9 * * 1-5"',
    '      timezone: Europe/Berlin',
    'inputs:',
    '  company: { type: string, default: Acme }',
    '  count: { type: integer }',
    '  images: { type: array, default: [] }',
    'timeout: 10m',
    'defaults: { timeout: 60s, retry: 2 }',
    'steps:',
    '  - id: logo',
    '    uses: image.render_text',
    '    with:',
    '      text: ${{ inputs.company }}',
    '  - id: paste',
    '    uses: sheet.insert_image',
    '    needs: [quote]',
    "    if: ${{ steps.logo.status == 'succeeded' }}",
    '    with: { image: "${{ steps.logo.files[0] }}", nested: [{ a: "${{ steps.thumbs.outputs }}" }] }',
    '    retry: { attempts: 5, delay: 500ms }',
    '    timeout: 30s',
    '    idle-timeout: 10s',
    '    continue-on-error: true',
    '  - id: quote',
    '    uses: sheet.create_workbook',
    '  - id: thumbs',
    '    uses: image.resize',
    '    foreach: ${{ inputs.images }}',
    '    if: always()',
  );

  it('fills defaults, parses durations and adds implicit needs, sorted', () => {
    const workflow = parse(text);
    expect(workflow).toMatchObject({
      file: join(process.cwd(), 'wf.yaml'),
      name: 'logo-to-quote',
      on: {
        watch: { paths: ['artifacts/inbox/*.png'], events: ['add'], debounceMs: 300, location: { line: 3, col: 3 } },
        schedule: [{ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', overlap: 'skip', catchUp: 'one', location: { line: 5, col: 7 } }],
      },
      inputs: {
        company: { type: 'string', default: 'Acme', required: false },
        count: { type: 'integer', required: true, location: { file: 'wf.yaml', line: 9, col: 3 } },
      },
      timeoutMs: 600_000,
      defaults: { timeoutMs: 60_000, retry: { attempts: 2 } },
    });
    const [logo, paste, quote, thumbs] = workflow.steps;
    expect(logo).toMatchObject({ id: 'logo', app: 'image', tool: 'render_text', needs: [], continueOnError: false });
    expect(paste).toMatchObject({
      id: 'paste',
      uses: 'sheet.insert_image',
      app: 'sheet',
      tool: 'insert_image',
      needs: ['logo', 'quote', 'thumbs'],
      if: "steps.logo.status == 'succeeded'",
      retry: { attempts: 5, delayMs: 500 },
      timeoutMs: 30_000,
      idleTimeoutMs: 10_000,
      continueOnError: true,
      location: { file: 'wf.yaml', line: 18, col: 5 },
    });
    expect(['id', 'uses', 'needs', 'if', 'with'].map((key) => locateStepKey(workflow, 1, key))).toMatchObject([
      { line: 18, col: 5 },
      { line: 19, col: 5 },
      { line: 20, col: 5 },
      { line: 21, col: 5 },
      { line: 22, col: 5 },
    ]);
    expect(locateStepKey(workflow, 0, 'foreach', 'with')).toMatchObject({ line: 16, col: 5 });
    expect(locateStepKey(workflow, 0, 'foreach')).toEqual({ file: 'wf.yaml', line: 14, col: 5 });
    expect(quote!.needs).toEqual([]);
    expect(thumbs).toMatchObject({ foreach: '${{ inputs.images }}', if: 'always()' });
  });

  it('reads a file with loadWorkflow, and reports a missing one as not-found', async () => {
    const file = join(dir, 'small.yaml');
    await writeFile(file, 'steps:\n  - { id: a, uses: image.info }\n');
    const workflow = await loadWorkflow(file, config);
    expect(workflow).toMatchObject({ file, name: 'small', steps: [{ id: 'a' }] });
    await expect(loadWorkflow(join(dir, 'nope.yaml'), config)).rejects.toMatchObject({ code: 'not-found' });
  });

  it('handles 10,000 steps with references in one pass', () => {
    let big = 'name: big\ninputs:\n  path: { type: string, default: x.png }\nsteps:\n';
    for (let i = 0; i < 10_000; i++) {
      big += `  - id: s${i}\n    uses: image.resize\n    with: { path: "\${{ steps.s${Math.max(0, i - 1)}.outputs.path }}" }\n`;
    }
    big = big.replace('steps.s0.outputs', 'inputs.path');
    const workflow = parse(big);
    expect(workflow.steps).toHaveLength(10_000);
    expect(workflow.steps[9_999]!.needs).toEqual(['s9998']);
  });
});

describe('parseWorkflowText: problems point at file:line:col', () => {
  it('reports an unknown key, naming it and the key that was meant', () => {
    expect(problemsOf(() => parse(lines('steps:', '  - id: logo', '    uses: image.render_text', '    need: [x]')))).toEqual([
      'wf.yaml:4:5: unknown key `need` in step `logo`\n' +
        '  hint: did you mean `needs`? allowed keys: id, uses, with, needs, if, foreach, retry, timeout, idle-timeout, continue-on-error, elicit, max-items',
    ]);
  });

  it('reports a bad duration at its value, and a number without unit with a hint', () => {
    expect(
      problemsOf(() => parse(lines('steps:', '  - id: logo', '    uses: image.render_text', '    timeout: 5 minutes', '    idle-timeout: 30'))),
    ).toEqual([
      'wf.yaml:4:14: `timeout` of step `logo`: expected a duration like 500ms, 30s or 10m, got `5 minutes`',
      'wf.yaml:5:19: `idle-timeout` of step `logo`: expected a duration like 500ms, 30s or 10m, got `30`\n' +
        '  hint: a bare number has no unit: write `30s` or `30ms`',
    ]);
  });

  it('reports an unknown app, naming the known ones', () => {
    expect(problemsOf(() => parse(lines('steps:', '  - id: logo', '    uses: imge.render_text')))).toEqual([
      'wf.yaml:3:11: unknown app `imge` in `uses: imge.render_text` of step `logo`\n' +
        `  hint: did you mean \`image\`? apps in ${join(dir, 'runner.config.yaml')}: image, sheet`,
    ]);
  });

  it('reports an unknown step referenced inside ${{ }} at its ${{', () => {
    const text = lines('steps:', '  - id: logo', '    uses: image.render_text', '  - id: paste', '    uses: sheet.insert_image', '    with:', '      image: ${{ steps.lgo.files[0] }}');
    expect(problemsOf(() => parse(text))).toEqual([
      'wf.yaml:7:14: `with.image` of step `paste` refers to step `lgo`, which does not exist\n  hint: did you mean `logo`? steps: logo, paste',
    ]);
  });

  it('reports bad expressions, unknown needs and references to the step itself', () => {
    const text = lines(
      'steps:',
      '  - id: a',
      '    uses: image.info',
      '    needs: [a, zz]',
      '    if: steps.a.status == ',
      '    with: { x: "value ${{ 1 + }}", y: "${{ steps.a.outputs }}" }',
    );
    expect(problemsOf(() => parse(text))).toEqual([
      'wf.yaml:4:13: `needs` of step `a` refers to its own step `a`\n  hint: a step cannot need itself or read its own result',
      'wf.yaml:4:16: `needs` of step `a` refers to step `zz`, which does not exist\n  hint: steps: a',
      expect.stringMatching(/^wf\.yaml:5:\d+: `if` of step `a`: /),
      "wf.yaml:6:23: `with.x` of step `a`: Unexpected symbol: '+' in `${{ 1 + }}`",
      'wf.yaml:6:40: `with.y` of step `a` refers to its own step `a`\n  hint: a step cannot need itself or read its own result',
    ]);
  });

  it('reports a cycle at its first step, showing the whole loop', () => {
    const text = lines(
      'steps:',
      '  - id: a',
      '    uses: image.info',
      '    with: { p: "${{ steps.c.outputs }}" }',
      '  - id: b',
      '    uses: image.info',
      '    needs: [a]',
      '  - id: c',
      '    uses: image.info',
      '    needs: [b]',
    );
    expect(problemsOf(() => parse(text))).toEqual([
      'wf.yaml:2:5: steps form a cycle: a → b → c → a (each step needs the one before it)\n' +
        '  hint: remove one of these needs; references to `steps.<id>` in `with`, `if`, `foreach` and `elicit` count as needs too',
    ]);
  });

  // Only a need on a later step can close a cycle, so a workflow is searched for one only when it has such a need:
  // each way of writing one (`needs`, `if`, `foreach`, `elicit`) must still be found.
  it.for([
    ['needs', '    needs: [b]'],
    ['if', "    if: steps.b.status == 'succeeded'"],
    ['foreach', '    foreach: ${{ steps.b.outputs }}'],
    ['elicit', '    elicit: { message: "${{ steps.b.text }}", schema: { type: object, properties: {} } }'],
  ])('reports a cycle whose only need on a later step is in `%s`', ([, need]) => {
    const text = lines('steps:', '  - id: a', '    uses: image.info', need, '  - id: b', '    uses: image.info', '    needs: [a]');
    expect(problemsOf(() => parse(text))).toEqual([
      'wf.yaml:2:5: steps form a cycle: a → b → a (each step needs the one before it)\n' +
        '  hint: remove one of these needs; references to `steps.<id>` in `with`, `if`, `foreach` and `elicit` count as needs too',
    ]);
  });

  it('reports a YAML syntax error with its position, and only the first one', () => {
    expect(problemsOf(() => parse(lines('steps:', '  - id: a', '    with: { x: ${{ inputs.a }} }')))).toEqual([
      expect.stringMatching(/^wf\.yaml:3:17: YAML syntax error: /),
    ]);
  });

  it('reports duplicate ids, bad names and missing keys, all in one pass', () => {
    const text = lines('name: Logo Flow', 'steps:', '  - id: a', '    uses: image.info', '  - id: a', '    uses: image.info', '  - uses: image', '  - id: 1b');
    expect(problemsOf(() => parse(text))).toEqual([
      'wf.yaml:1:7: `name`: expected a name of up to 64 lowercase letters, digits, `_` and `-`, starting with a letter or digit, got `Logo Flow`',
      'wf.yaml:5:9: duplicate step id `a`; the first step with it is at line 3',
      'wf.yaml:7:5: step #3 is missing `id`',
      'wf.yaml:7:11: `uses` of step #3: expected `<app>.<tool>`, like image.resize, got `image`',
      'wf.yaml:8:5: step `1b` is missing `uses`',
      'wf.yaml:8:9: `id` of step `1b`: expected a step id of up to 64 letters, digits, `_` and `-`, not starting with a digit or `-`, got `1b`',
    ]);
  });

  it('reserves the step id `logs`, in any case, where the run folder keeps the apps\' logs', () => {
    const text = lines('steps:', '  - id: logs', '    uses: image.info', '  - id: Logs', '    uses: image.info', '  - id: logs_2', '    uses: image.info');
    const reason = "is reserved: the run folder keeps the apps' logs in `logs/`, where this step's files would go\n  hint: choose another id";
    expect(problemsOf(() => parse(text))).toEqual([`wf.yaml:2:9: step id \`logs\` ${reason}`, `wf.yaml:4:9: step id \`Logs\` ${reason}`]);
  });

  it('limits workflow names and step ids to 64 characters, as they become folder names', () => {
    const long = (length: number) => `a${'b'.repeat(length - 1)}`;
    expect(parse(lines(`name: ${long(64)}`, 'steps:', `  - id: ${long(64)}`, '    uses: image.info')).steps[0]!.id).toBe(long(64));
    const shown = `\`${long(57)}...\``;
    expect(problemsOf(() => parse(lines(`name: ${long(65)}`, 'steps:', `  - id: ${long(65)}`, '    uses: image.info')))).toEqual([
      `wf.yaml:1:7: \`name\`: expected a name of up to 64 lowercase letters, digits, \`_\` and \`-\`, starting with a letter or digit, got ${shown}`,
      `wf.yaml:3:9: \`id\` of step \`${long(65)}\`: expected a step id of up to 64 letters, digits, \`_\` and \`-\`, not starting with a digit or \`-\`, got ${shown}`,
    ]);
    expect(problemsOf(() => parseWorkflowText(lines('steps:', '  - { id: a, uses: image.info }'), `${long(65)}.yaml`, config))).toEqual([
      `${long(65)}.yaml:1:1: the workflow has no \`name\`, and its file name \`${long(65)}\` is not a valid one\n` +
        '  hint: add `name:` with up to 64 lowercase letters, digits, `_` and `-`, starting with a letter or digit',
    ]);
  });

  it('keeps relative watch paths inside the config folder; an absolute path is the way out', () => {
    const watching = (path: string) => lines('on:', `  watch: { paths: ["inbox/*.png", ${JSON.stringify(path)}] }`, 'steps:', '  - { id: a, uses: image.info }');
    expect(problemsOf(() => parse(watching('../../etc/*.conf')))).toEqual([
      `wf.yaml:2:35: watch path \`../../etc/*.conf\` reaches outside the config folder (${dir})\n` +
        '  hint: watch paths are relative to the config folder; to watch a folder outside the project, write its absolute path',
    ]);
    expect(parse(watching('/srv/drop/*.png')).on.watch!.paths).toEqual(['inbox/*.png', '/srv/drop/*.png']);
    expect(parse(watching('a/../b/**')).on.watch!.paths).toHaveLength(2);
  });

  it('stops nested aliases that expand past 100,000 nodes at the alias, and reads ordinary aliases', () => {
    const levels = ['    l0: &l0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++) levels.push(`    l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(', ')}]`);
    const bomb = lines('steps:', '  - id: a', '    uses: image.info', '    with:', ...levels);
    expect(problemsOf(() => parse(bomb))).toEqual([expect.stringMatching(/^wf\.yaml:10:14: YAML aliases expand to more than 100,000 nodes \(limit for runner files\)\n  hint: /)]);

    const aliased = parse(lines('defaults: { retry: &retry { attempts: 3 } }', 'steps:', '  - { id: a, uses: image.info, retry: *retry }', '  - { id: b, uses: image.info, retry: *retry }'));
    expect(aliased.steps.map((step) => step.retry)).toEqual([{ attempts: 3 }, { attempts: 3 }]);
  });

  it('refuses a file over 4MiB before parsing it, naming its size', async () => {
    const file = join(dir, 'huge.yaml');
    const limit = 4 * 1024 ** 2;
    const text = 'steps:\n  - { id: a, uses: image.info }\n# ';
    await writeFile(file, text.padEnd(limit, 'x'));
    expect((await loadWorkflow(file, config)).steps).toHaveLength(1);
    await writeFile(file, text.padEnd(limit + 1, 'x'));
    const error = await loadWorkflow(file, config).catch((e: unknown) => e);
    expect(problemsOf(() => { throw error; })).toEqual([
      `file \`${file}\` is too large: 4,194,305 bytes, over the limit of 4MiB for config and workflow files\n` +
        '  hint: a 10,000-step workflow is about 1MiB: check that this is the file you meant',
    ]);
  });

  it('checks input defaults against their type, and the retry shorthand', () => {
    const text = lines('inputs:', '  n: { type: number, default: "3" }', 'steps:', '  - id: a', '    uses: image.info', '    retry: { attemps: 3 }');
    expect(problemsOf(() => parse(text))).toEqual([
      'wf.yaml:2:31: `default` of input `n`: expected a number (the input\'s type), got `"3"`',
      'wf.yaml:6:14: unknown key `attemps` in `retry` of step `a`\n' +
        '  hint: did you mean `attempts`? allowed keys: attempts, delay, backoff, max-delay, on, unsafe',
    ]);
  });
});

describe('resolveInputs', () => {
  const workflow = () =>
    parse(
      lines(
        'name: inputs',
        'inputs:',
        '  company: { type: string, default: Acme }',
        '  count: { type: integer }',
        '  ratio: { type: number, required: false }',
        '  dry: { type: boolean, default: false }',
        '  images: { type: array, default: [] }',
        '  options: { type: object, required: false }',
        'steps:',
        '  - { id: a, uses: image.info }',
      ),
    );

  it('converts -i values to the declared types, applies defaults, and lets -i win over the file', () => {
    const inputs = resolveInputs(workflow(), { count: 1, company: 'FromFile' }, {
      cliPairs: ['count=3', 'ratio=0.5', 'dry=true', 'images=["a.png"]', 'options={"x":1}', 'company=Globex=Inc'],
      file: 'in.json',
    });
    expect(inputs).toEqual({ company: 'Globex=Inc', count: 3, ratio: 0.5, dry: true, images: ['a.png'], options: { x: 1 } });
    expect(resolveInputs(workflow(), { count: 2 }, {})).toEqual({ company: 'Acme', count: 2, dry: false, images: [] });
  });

  it('reports unknown names, wrong types and missing required inputs, naming the source', () => {
    expect(
      problemsOf(
        () => resolveInputs(workflow(), { compny: 'x', dry: 'yes' }, { cliPairs: ['count=2.5', 'images=a.png', 'novalue'], file: 'in.json' }),
        'inputs',
      ),
    ).toEqual([
      'unknown input: input `compny` in in.json is not an input of workflow `inputs`\n  hint: did you mean `company`? its inputs: company, count, ratio, dry, images, options',
      'input `dry` in in.json: expected true or false, got `"yes"`',
      '`-i count`: expected an integer, got `2.5`',
      '`-i images`: expected a JSON array, got `a.png`',
      '`-i novalue`: expected name=value',
    ]);
    expect(problemsOf(() => resolveInputs(workflow(), {}, {}), 'inputs')).toEqual([
      'wf.yaml:4:3: missing required input `count` (an integer)\n  hint: give it with -i count=VALUE or in an --inputs file',
    ]);
  });

  it('reads an --inputs file, reporting a JSON syntax error with its position', async () => {
    const good = join(dir, 'inputs.json');
    await writeFile(good, '{ "count": 4 }');
    expect(await readInputsFile(good)).toEqual({ count: 4 });
    const bad = join(dir, 'bad-inputs.json');
    await writeFile(bad, '{\n  "count": 4,\n}\n');
    const error = await readInputsFile(bad).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunnerError);
    expect((error as RunnerError).code).toBe('inputs');
    expect((error as RunnerError).diagnostics.map(formatDiagnostic)).toEqual([`${bad}:3:1: JSON syntax error: Expected double-quoted property name`]);
  });
});
