import { describe, expect, it } from 'vitest';
import type { RunnerConfig } from '../../src/config/types.js';
import { loadConfig } from '../../src/config/load.js';
import { formatDiagnostic, RunnerError, type Diagnostic } from '../../src/errors.js';
import { coerceToolArguments, diagnoseLiteralArguments } from '../../src/scheduler/validate-args.js';
import { followOutputSchema, mismatchedArgumentType } from '../../src/scheduler/type-flow.js';
import { readFacts, readPlainComparisonFacts, readPlainFacts } from '../../src/workflow/expression-access.js';
import { findBareBraces } from '../../src/workflow/expression-checks.js';
import { parseCached } from '../../src/workflow/expression-parser.js';
import { parseWorkflowText } from '../../src/workflow/load.js';
import { collectStepReads, inferValueType, type TypeSources } from '../../src/workflow/step-reads.js';

const config: RunnerConfig = await loadConfig({ cwd: '/nonexistent-runner-dir', env: {} }).then((loaded) => ({
  ...loaded,
  apps: { image: { transport: 'stdio', command: 'node' } as unknown as RunnerConfig['apps'][string] },
}));
const lines = (...text: string[]) => `${text.join('\n')}\n`;
const header = ['name: wf', 'inputs:', '  company: { type: string, default: Acme }', '  count: { type: integer, default: 2 }', 'steps:', '  - id: a', '    uses: image.info'];

/** Every diagnostic of a workflow (errors thrown, or warnings returned), formatted. */
function diagnose(text: string, env?: Record<string, string>): string[] {
  try {
    return (parseWorkflowText(text, 'wf.yaml', config, { env }).warnings ?? []).map(show);
  } catch (error) {
    if (!(error instanceof RunnerError)) throw error;
    return error.diagnostics.map(show);
  }
}
const show = (diagnostic: Diagnostic) => `${diagnostic.severity === 'warning' ? 'warning: ' : ''}${formatDiagnostic(diagnostic)}`;

describe('what an expression reads', () => {
  const factsOf = (source: string) => {
    const parsed = parseCached(source, 'condition');
    if (!parsed.ok) throw new Error(parsed.message);
    return readFacts(parsed.expr, source);
  };

  it('finds each context access with its path, through index forms, functions and operators', () => {
    const { accesses } = factsOf("format('{0}', steps['my-step'].outputs[0].x) == inputs.a || !env.B && fromJSON(steps.c.text).y");
    expect(accesses.map(({ context, path, position, tested }) => ({ context, path, position, tested }))).toEqual([
      { context: 'steps', path: ['my-step', 'outputs', 0, 'x'], position: 14, tested: true },
      { context: 'inputs', path: ['a'], position: 48, tested: true },
      { context: 'env', path: ['B'], position: 61, tested: true },
      { context: 'steps', path: ['c', 'text'], position: 79, tested: true },
    ]);
  });

  it('marks computed indexes and `*` as unknown segments, and walks the index expression', () => {
    const { accesses } = factsOf('steps[inputs.which].outputs.*.path');
    expect(accesses.map(({ context, path }) => ({ context, path }))).toEqual([
      { context: 'steps', path: [null, 'outputs', null, 'path'] },
      { context: 'inputs', path: ['which'] },
    ]);
  });

  it('notes a step status compared with a string, and counts positions on later lines', () => {
    const facts = factsOf("inputs.a &&\n  steps.b.status == 'success'");
    expect(facts.statusComparisons).toMatchObject([{ operator: '==', value: 'success', access: { path: ['b', 'status'], position: 14 } }]);
  });

  it('reads a plain access without the parser, as the parser would', () => {
    expect(readPlainFacts('  steps.a-b.outputs.x ')!.accesses).toEqual([{ context: 'steps', path: ['a-b', 'outputs', 'x'], position: 2, tested: false }]);
    expect(readPlainFacts('steps.a.outputs[0]')).toBeUndefined();
  });

  it.for([
    "steps.build.status == 'failed'",
    "  steps.b-2.Status != ''  ",
    "inputs.mode == 'fast = good'",
    "env.A=='x'",
    "steps.a.outputs.text != 'a b'",
  ])('reads `%s` without the parser, as the parser would', (source) => {
    const plain = readPlainComparisonFacts(source);
    expect(plain).toBeDefined();
    expect(plain).toEqual(factsOf(source));
  });

  it.for([
    "steps.a.status == 'it''s'",
    "steps.a.status === 'x'",
    "'x' == steps.a.status",
    "steps.a.status == 'x' && inputs.b == 'y'",
    "steps.a.outputs[0] == 'x'",
    'steps.a.status == success',
    "steps.a.status = 'x'",
    "!steps.a.status == 'x'",
  ])('leaves `%s` to the parser', (source) => {
    expect(readPlainComparisonFacts(source)).toBeUndefined();
  });

  it('finds {{ }} written without $ in literal text only', () => {
    expect(findBareBraces('a {{ x }} b {{y}} ${{ z }} {{ }} {{ open')).toEqual([2, 12]);
  });
});

describe('parseWorkflowText: expression checks', () => {
  it('accepts a workflow that reads only what exists, case-insensitively as at run time', () => {
    const text = lines(
      ...header,
      '    with: { path: "${{ Inputs.Company }}/${{ run.dir }}/${{ workflow.name }}/${{ trigger.catchUp }}" }',
      '  - id: b',
      '    uses: image.info',
      '    foreach: ${{ fromJSON(steps.a.text) }}',
      "    if: steps.a.Status == 'succeeded' && steps.a.outputs",
      '    with: { path: "${{ item.path }}-${{ index }}", n: "${{ steps.a.files[0] }}" }',
      '    elicit: { ok: "${{ item }}" }',
    );
    expect(diagnose(text)).toEqual([]);
  });

  it('says when a workflow declares no inputs', () => {
    expect(diagnose(lines('steps:', '  - id: a', '    uses: image.info', '    with: { path: "${{ inputs.file }}" }'))).toEqual([
      'wf.yaml:4:20: `with.path` of step `a`: `inputs.file` is not a declared input, so it would always be empty\n' +
        '  hint: declare it under `inputs:` (this workflow declares no inputs)',
    ]);
  });

  it('suggests the input an abbreviation stands for', () => {
    expect(diagnose(lines(...header, '    with: { path: "${{ inputs.cnt }}" }'))[0]).toContain('did you mean `inputs.count`?');
  });

  it('warns about an env variable only when the environment is known and lacks it', () => {
    const text = lines(...header, '    with: { path: "${{ env.HOME_DIR }}", b: "${{ env.home_dir }}" }');
    expect(diagnose(text)).toEqual([]);
    expect(diagnose(text, { HOME_DIR: '/h' })).toEqual([]);
    expect(diagnose(text, {})).toEqual([
      'warning: wf.yaml:8:20: `with.path` of step `a`: `env.HOME_DIR` is not set in the environment, so it reads as empty\n' +
        "  hint: set HOME_DIR before running, or give a fallback: ${{ env.HOME_DIR || 'default' }}",
      'warning: wf.yaml:8:46: `with.b` of step `a`: `env.home_dir` is not set in the environment, so it reads as empty\n' +
        "  hint: set home_dir before running, or give a fallback: ${{ env.home_dir || 'default' }}",
    ]);
  });

  it('reports every problem of a step in one pass, sorted, errors and warnings together', () => {
    const text = lines(...header, '    if: ${{ steps.a.outputs }}', '    with:', '      x: "{{ a }} ${{ inputs.nope }}"', '      y: ${{ steps.zz.status }}');
    expect(diagnose(text)).toEqual([
      'wf.yaml:8:9: `if` of step `a` refers to its own step `a`\n  hint: a step cannot need itself or read its own result',
      'warning: wf.yaml:10:11: `with.x` of step `a`: `{{ a }}` has no `$`, so it is sent as the literal text `{{ a }}`\n  hint: expressions are written `${{ a }}`',
      'wf.yaml:10:19: `with.x` of step `a`: `inputs.nope` is not a declared input, so it would always be empty\n  hint: declare it under `inputs:` (declared inputs: company, count)',
      'wf.yaml:11:10: `with.y` of step `a` refers to step `zz`, which does not exist\n  hint: steps: a',
    ]);
  });

  it('positions problems inside block, folded and escaped strings at the expression', () => {
    const text = lines(
      ...header,
      '    with:',
      '      a: |',
      '        one ${{ inputs.company }}',
      '          two ${{ inputs.x1 }}',
      '      b: >',
      '        one',
      '        two ${{ inputs.x2 }}',
      '      c: "tab\\there ${{ inputs.x3 }}"',
      "      d: 'it''s ${{ inputs.x4 }}'",
    );
    expect(diagnose(text).map((line) => line.split(': `')[0])).toEqual(['wf.yaml:11:15', 'wf.yaml:14:13', 'wf.yaml:15:21', 'wf.yaml:16:17']);
  });

  it('keeps the unknown-function hint to what exists, with a did-you-mean', () => {
    const [problem] = diagnose(lines(...header, "    if: contain(inputs.company, 'A')"));
    expect(problem).toBe(
      "wf.yaml:8:9: `if` of step `a`: Unrecognized function: 'contain' in `contain(inputs.company, 'A')`\n" +
        '  hint: did you mean `contains()`? functions are case(), contains(), endsWith(), format(), fromJson(), join(), startsWith(), toJson(), success(), failure(), always(), cancelled()',
    );
  });

  it('checks a literal JSONata expression of runner.transform, and not one built with ${{ }}', () => {
    const transform = (expression: string) => lines('steps:', '  - id: t', '    uses: runner.transform', `    with: { expression: ${JSON.stringify(expression)} }`);
    expect(diagnose(transform('$sum(values'))).toEqual([
      'wf.yaml:4:36: `with.expression` of step `t`: JSONata syntax error at character 11: Expected ")" before end of expression\n' +
        '  hint: see https://docs.jsonata.org for the syntax',
    ]);
    expect(diagnose(transform("${{ 'x' }} +"))).toEqual([]);
    expect(diagnose(transform('$sum(values)'))).toEqual([]);
  });

  it("checks a built-in step's arguments against its inputSchema without any app, leaving values built with ${{ }} to the run", () => {
    const step = (...body: string[]) => diagnose(lines('inputs:', '  n: { type: integer, default: 2 }', 'steps:', ...body));
    expect(step('  - id: t', '    uses: runner.transform', '    with: { expresion: "1 + 1" }')).toEqual([
      'wf.yaml:6:5: step `t`: missing required argument `expression`\n  hint: required: expression',
      'wf.yaml:6:13: step `t`: unknown argument `expresion`\n  hint: did you mean `expression`? arguments: input, expression',
    ]);
    expect(step('  - id: s', '    uses: runner.save')).toEqual([
      'wf.yaml:5:5: step `s`: missing required argument `name`\n  hint: required: name, content',
      'wf.yaml:5:5: step `s`: missing required argument `content`\n  hint: required: name, content',
    ]);
    expect(step('  - id: s', '    uses: runner.save', '    with: { name: a.csv, content: x, format: yaml }')).toEqual([
      expect.stringMatching(/^wf\.yaml:6:46: step `s`: .*format/),
    ]);
    // Keys whose values are expressions count as present; their values are judged when the step runs.
    expect(step('  - id: s', '    uses: runner.save', '    with: { name: "${{ inputs.n }}.txt", content: "${{ inputs.n }}" }')).toEqual([]);
    expect(step('  - id: t', '    uses: runner.transform', '    with: { input: [1, 2], expression: "$sum($)" }')).toEqual([]);
  });
});

describe('what a step reads, and the type of a value', () => {
  const workflow = parseWorkflowText(
    lines(
      ...header,
      '    with: { path: x }',
      '  - id: fan',
      '    uses: image.info',
      '    foreach: ${{ inputs.count }}',
      '  - id: c',
      '    uses: image.info',
      "    if: steps.a.outputs.size > 2",
      '    with: { p: "${{ steps.a.outputs.meta.width }}", q: ["${{ steps.fan.outputs[0].n }}"] }',
    ),
    'wf.yaml',
    config,
  );
  const sources: TypeSources = {
    inputs: workflow.inputs,
    steps: new Map(workflow.steps.map((step) => [step.id, step])),
    outputType: (_step, path) => (path.join('.') === 'meta.width' ? 'integer' : undefined),
  };

  it('lists every steps.<id> read with where to report it', () => {
    const reads = collectStepReads(workflow.steps[2]!, 2);
    expect(reads.map(({ access, path, offset }) => ({ path: access.path, at: path, offset }))).toEqual([
      { path: ['a', 'outputs', 'meta', 'width'], at: ['steps', 2, 'with', 'p'], offset: 0 },
      { path: ['fan', 'outputs', 0, 'n'], at: ['steps', 2, 'with', 'q', 0], offset: 0 },
      { path: ['a', 'outputs', 'size'], at: ['steps', 2, 'if'], offset: 0 },
    ]);
  });

  it.each([
    ['${{ steps.a.outputs.meta.width }}', 'integer'],
    ['${{ inputs.company }}', 'string'],
    ['${{ inputs.COUNT }}', 'integer'],
    ['n=${{ inputs.count }}', 'string'],
    ["${{ steps.a.status == 'failed' }}", 'boolean'],
    ["${{ format('{0}', 1) }}", 'string'],
    ['${{ 3 }}', 'integer'],
    ['${{ steps.fan.text }}', 'array'],
    ['${{ steps.a.text }}', 'string'],
    ['${{ index }}', 'integer'],
    ['${{ fromJSON(inputs.company) }}', undefined],
    ['${{ inputs.company || 3 }}', undefined],
    ['${{ steps.a.outputs.other }}', undefined],
    ['${{ item }}', undefined],
  ])('%s is %s', (value, type) => {
    expect(inferValueType(value, sources)).toBe(type);
  });
});

describe('type flow against tool schemas', () => {
  const outputSchema = {
    type: 'object',
    properties: { path: { type: 'string' }, meta: { type: 'object', properties: { width: { type: 'integer' } } }, rows: { type: 'array', items: { type: 'object', properties: { n: { type: 'number' } } } } },
  };

  it('follows fields and indexes, and names the first field the outputSchema lacks', () => {
    expect(followOutputSchema(outputSchema, ['meta', 'width']).schema).toEqual({ type: 'integer' });
    expect(followOutputSchema(outputSchema, ['rows', 0, 'n']).schema).toEqual({ type: 'number' });
    expect(followOutputSchema(outputSchema, ['meta', 'widht'])).toEqual({ missing: { index: 1, field: 'widht', fields: ['width'] } });
    expect(followOutputSchema({ ...outputSchema, additionalProperties: true }, ['other'])).toEqual({});
    expect(followOutputSchema({ type: 'object' }, ['anything'])).toEqual({});
  });

  it('lets a number or boolean into a string (it is passed as text), and nothing else that does not fit', () => {
    const tool = { inputSchema: { type: 'object' as const, properties: { s: { type: 'string' }, n: { type: 'number' }, i: { type: 'integer' }, any: {} } } };
    expect(mismatchedArgumentType(tool, 's', 'integer')).toBeUndefined();
    expect(mismatchedArgumentType(tool, 's', 'boolean')).toBeUndefined();
    expect(mismatchedArgumentType(tool, 'n', 'integer')).toBeUndefined();
    expect(mismatchedArgumentType(tool, 'i', 'number')).toBeUndefined();
    expect(mismatchedArgumentType(tool, 'any', 'array')).toBeUndefined();
    expect(mismatchedArgumentType(tool, 'i', 'string')).toEqual(['integer']);
    expect(mismatchedArgumentType(tool, 's', 'array')).toEqual(['string']);
  });
});

describe('coerceToolArguments', () => {
  const tool = {
    inputSchema: {
      type: 'object' as const,
      properties: {
        text: { type: 'string' },
        either: { type: ['string', 'number'] },
        count: { type: 'integer' },
        nested: { type: 'object', properties: { label: { type: 'string' } } },
        list: { type: 'array', items: { type: 'string' } },
      },
    },
  };

  it('turns numbers and booleans into strings where the schema wants a string, top level and nested', () => {
    const args = { text: 42, either: 7, count: 3, nested: { label: true, other: 1 }, list: [1], extra: 5 };
    expect(coerceToolArguments(tool, args)).toEqual({ text: '42', either: 7, count: 3, nested: { label: 'true', other: 1 }, list: [1], extra: 5 });
    expect(args.text).toBe(42); // the input is not changed
  });

  it('returns the same object when nothing changes, and keeps a __proto__ key a plain key', () => {
    const args = { text: 'x', count: 1 };
    expect(coerceToolArguments(tool, args)).toBe(args);
    const hostile = JSON.parse('{"__proto__": 1, "text": 2}');
    const coerced = coerceToolArguments({ inputSchema: { type: 'object', properties: { ['__proto__']: { type: 'string' }, text: { type: 'string' } } } }, hostile);
    expect(Object.getPrototypeOf(coerced)).toBe(Object.prototype);
    expect(Object.keys(coerced)).toEqual(['__proto__', 'text']);
    expect(coerced.text).toBe('2');
  });

  it('is what literal arguments are checked after: a number for a string argument is fine', () => {
    expect(diagnoseLiteralArguments(tool, { text: 1, count: 'x' })).toEqual([{ message: '`count` must be integer, got a string ("x")', path: ['count'], target: 'value' }]);
  });
});

describe('a message about a very long expression', () => {
  it('quotes only its first 200 characters (the position says where it is), not all 40,000 of them', () => {
    const expression = `\${{ ${'('.repeat(20_000)}1${')'.repeat(20_000)} }}`;
    const [message, ...rest] = diagnose(lines('name: wf', 'steps:', '  - id: a', '    uses: image.info', `    with: { path: "${expression}" }`));
    expect(rest).toEqual([]);
    expect(message).toBe(`wf.yaml:5:20: \`with.path\` of step \`a\`: Expression is longer than 21000 characters in \`${expression.slice(0, 200)}… (${(expression.length - 200).toLocaleString('en-US')} more characters)\``);
  });
});

describe('a timeout of zero', () => {
  it('is warned about where it is written: nothing can finish within it', () => {
    const warnings = diagnose(
      lines('name: wf', 'timeout: 0s', 'defaults: { timeout: 0m }', 'steps:', '  - id: a', '    uses: image.info', '    timeout: 0ms', '    idle-timeout: 0s', '  - id: b', '    uses: image.info', '    timeout: 0.5s'),
    );
    expect(warnings).toEqual([
      'warning: wf.yaml:2:10: `timeout` is `0s`: nothing can finish within it, so it runs out at once\n  hint: give it a length, like 30s, or leave it out for the default',
      'warning: wf.yaml:3:22: `defaults.timeout` is `0m`: nothing can finish within it, so it runs out at once\n  hint: give it a length, like 30s, or leave it out for the default',
      'warning: wf.yaml:7:14: `timeout` of step `a` is `0ms`: nothing can finish within it, so it runs out at once\n  hint: give it a length, like 30s, or leave it out for the default',
      'warning: wf.yaml:8:19: `idle-timeout` of step `a` is `0s`: nothing can finish within it, so it runs out at once\n  hint: give it a length, like 30s, or leave it out for the default',
    ]);
  });
});
