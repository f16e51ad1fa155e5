import { describe, expect, it } from 'vitest';
import { formatDiagnostic, type Diagnostic } from '../../src/errors.js';
import { locateInString, locateItems, locateKeys, locatePath, parseJsonSource, parseYamlSource, type YamlPath } from '../../src/config/yaml-source.js';

const lines = (...text: string[]) => `${text.join('\n')}\n`;

function parse(text: string) {
  const diagnostics: Diagnostic[] = [];
  const { source, data } = parseYamlSource(text, 'f.yaml', diagnostics);
  expect(diagnostics.map(formatDiagnostic)).toEqual([]);
  return { source, data };
}

/** `line:col` of the key (`k`), the value (`v`) and the 3rd character of a string (`s`) at `path`. */
function where(text: string, path: YamlPath, target: 'k' | 'v' | 's' = 'v'): string {
  const { source } = parse(text);
  const location =
    target === 's' ? locateInString(source, path, 2) : locatePath(source, path, target === 'k' ? 'key' : 'value');
  return `${location.line}:${location.col}`;
}

function syntaxErrorOf(text: string): string[] {
  const diagnostics: Diagnostic[] = [];
  const { data } = parseYamlSource(text, 'f.yaml', diagnostics);
  expect(data).toBeUndefined();
  return diagnostics.map(formatDiagnostic);
}

describe('parseYamlSource: positions', () => {
  const text = lines(
    'name: demo # comment',
    'steps:',
    '  - id: a',
    '    with: { x: "quoted", y: [1, two], z: plain text }',
    '  -',
    '  - &shared',
    '    id: b',
    '    with:',
    '      # note',
    '      x: |',
    "        block",
    '  - *shared',
    '  - [k: v, w]',
    '  - ? explicit',
    '    : value',
    '    empty:',
    '    tagged: !!str 12',
  );

  it('points at keys, and at scalar values or the key of a mapping or list', () => {
    expect(where(text, ['name'])).toBe('1:7');
    expect(where(text, ['name'], 'k')).toBe('1:1');
    expect(where(text, ['steps'])).toBe('2:1');
    expect(where(text, ['steps', 0])).toBe('3:5');
    expect(where(text, ['steps', 0, 'with'])).toBe('4:5');
    expect(where(text, ['steps', 0, 'with', 'x'])).toBe('4:16');
    expect(where(text, ['steps', 0, 'with', 'y', 1])).toBe('4:33');
    expect(where(text, ['steps', 0, 'with', 'z'])).toBe('4:42');
    expect(where(text, ['steps', 2, 'with', 'x'])).toBe('10:10');
    expect(where(text, ['steps', 4, 0, 'k'])).toBe('13:9');
    expect(where(text, ['steps', 4, 1])).toBe('13:12');
    expect(where(text, ['steps', 5, 'explicit'], 'k')).toBe('14:7');
    expect(where(text, ['steps', 5, 'explicit'])).toBe('15:7');
    expect(where(text, ['steps', 5, 'tagged'])).toBe('17:19');
  });

  it('places empty values and list items where the yaml library did', () => {
    expect(where(text, ['steps', 1])).toBe('5:4');
    expect(where(text, ['steps', 5, 'empty'])).toBe('16:11');
  });

  it('points at an alias, and into its anchor for what is inside', () => {
    expect(where(text, ['steps', 3])).toBe('12:5');
    expect(where(text, ['steps', 3, 'id'])).toBe('7:9');
  });

  it('points at the deepest part of a path that exists', () => {
    expect(where(text, ['steps', 0, 'with', 'nope'], 'k')).toBe('4:5');
    expect(where(text, ['steps', 9])).toBe('2:1');
    expect(where(text, ['nope'])).toBe('1:1');
  });

  it('finds a character in plain and simply quoted strings, else the start of the string', () => {
    expect(where(text, ['steps', 0, 'with', 'x'], 's')).toBe('4:19');
    expect(where(text, ['steps', 0, 'with', 'z'], 's')).toBe('4:44');
    expect(where(text, ['steps', 2, 'with', 'x'], 's')).toBe('10:10');
    expect(where('a: "x\\ty"\n', ['a'], 's')).toBe('1:4');
  });

  it('lists where each item of a list is, as locatePath says it: empty items, aliases and flow lists too', () => {
    const { source, data } = parse(text);
    for (const path of [['steps'], ['steps', 0, 'with', 'y'], ['steps', 4]] as YamlPath[]) {
      const items = locateItems(source, path);
      expect(items.length, JSON.stringify(path)).toBeGreaterThan(1);
      items.forEach((location, i) => expect(location, `${JSON.stringify(path)} ${i}`).toEqual(locatePath(source, [...path, i])));
    }
    expect(locateItems(source, ['steps']).length).toBe((data as { steps: unknown[] }).steps.length);
    expect(locateItems(source, ['name'])).toEqual([]);
    expect(locateItems(source, ['steps', 0])).toEqual([]);
    expect(locateItems(source, ['nothing', 'here'])).toEqual([]);
  });

  it('lists where each key of a mapping is', () => {
    const { source } = parse(text);
    expect(locateKeys(source, ['steps', 0])).toEqual({ id: { file: 'f.yaml', line: 3, col: 5 }, with: { file: 'f.yaml', line: 4, col: 5 } });
    expect(locateKeys(source, ['steps', 1])).toEqual({});
  });

  it('counts columns without a byte order mark, and lines across CRLF', () => {
    expect(where('\ufeffa: 1\r\nb: 2\r\n', ['b'])).toBe('2:4');
  });
});

describe('parseYamlSource: YAML 1.2 core schema', () => {
  it('reads yes/no as strings, and numbers as YAML 1.2 writes them', () => {
    const { data } = parse('a: yes\nb: no\nc: true\nd: ~\ne: 0o17\nf: 0x1F\ng: 0b101\nh: -.5\ni: 1_000\nj: .inf\nk: 2024-01-01\n');
    expect(data).toEqual({ a: 'yes', b: 'no', c: true, d: null, e: 15, f: 31, g: '0b101', h: -0.5, i: '1_000', j: Infinity, k: '2024-01-01' });
  });

  it('keeps the value of a tag it does not know, and resolves anchors', () => {
    expect(parse('a: !Ref name\nb: &x [1]\nc: *x\n').data).toEqual({ a: 'name', b: [1], c: [1] });
  });

  it('reads an empty file as null', () => {
    expect(parse('# nothing\n').data).toBeNull();
  });
});

describe('parseYamlSource: syntax errors', () => {
  it('points at the line of an unclosed quote, not where js-yaml gave up two steps later', () => {
    const text = lines('steps:', '  - id: a', '    with: { path: "x, size: 96 }', '  - id: b', '    with: { path: "y" }', '  - id: c', '    with: { path: z }');
    expect(syntaxErrorOf(text)).toEqual(['f.yaml:3:33: YAML syntax error: Missing closing "quote']);
  });

  it('rejects duplicate keys and a second document at its `---`', () => {
    expect(syntaxErrorOf('a: 1\nb: 2\na: 3\n')).toEqual(['f.yaml:3:1: YAML syntax error: Map keys must be unique']);
    expect(syntaxErrorOf('a: 1\n---\nb: 2\n')).toEqual(['f.yaml:2:1: YAML syntax error: a second document starts here, and a file holds only one']);
  });

  it('reports an alias without its anchor', () => {
    expect(syntaxErrorOf('a: *nope\n')).toEqual(['f.yaml:1:9: YAML syntax error: unidentified alias "nope"']);
  });
});

/** Ten levels of anchors, each a list aliasing the one before nine times: 9^10 nodes from a few hundred bytes. */
function aliasBomb(indent = ''): string {
  const levels = [`${indent}l0: &l0 [x, x, x, x, x, x, x, x, x]`];
  for (let i = 1; i < 10; i++) levels.push(`${indent}l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(', ')}]`);
  return levels.join('\n');
}

describe('parseYamlSource: alias expansion', () => {
  it('stops a "billion laughs" file at the alias that takes it past 100,000 nodes', () => {
    // Each alias adds its anchor's nodes: 10 for l0, 91 for l1, 820 for l2, 7,381 for l3, 66,430 for l4.
    // Nine of each make 74,718 by the end of l4; the first `*l4`, in l5 (line 7), takes it to 141,148.
    expect(syntaxErrorOf(lines('with:', aliasBomb('  ')))).toEqual([
      'f.yaml:7:12: YAML aliases expand to more than 100,000 nodes (limit for runner files)\n' +
        '  hint: each `*alias` counts as a copy of what its anchor holds, and aliases inside anchors multiply: write the repeated values out, or alias fewer levels deep',
    ]);
  });

  it('reads a file with a few anchors and aliases as if the values were written out', () => {
    const aliased = lines(
      'defaults: &retry { attempts: 3, delay: 1s, on: [timeout, transport] }',
      'steps:',
      '  - &step { id: a, uses: image.info, retry: *retry, with: { size: &size 96 } }',
      '  - *step',
      '  - { id: b, uses: image.resize, retry: *retry, with: { width: *size, height: *size } }',
    );
    const retry = { attempts: 3, delay: '1s', on: ['timeout', 'transport'] };
    const step = { id: 'a', uses: 'image.info', retry, with: { size: 96 } };
    expect(parse(aliased).data).toEqual({
      defaults: retry,
      steps: [step, step, { id: 'b', uses: 'image.resize', retry, with: { width: 96, height: 96 } }],
    });
  });
});

describe('parseJsonSource', () => {
  it('keeps the last of duplicate keys and points at it', () => {
    const diagnostics: Diagnostic[] = [];
    const { source, data } = parseJsonSource('{\n  "a": 1,\n  "a": 2\n}\n', 'f.json', diagnostics);
    expect(diagnostics).toEqual([]);
    expect(data).toEqual({ a: 2 });
    expect(locatePath(source, ['a'])).toEqual({ file: 'f.json', line: 3, col: 8 });
  });
});

describe('files nested too deep', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('a YAML file nested deeper than 100 levels is an error at the level past the limit, said plainly (not a stack overflow)', () => {
    expect(syntaxErrorOf(`a: { b: ${nested(1000)} }\n`)).toEqual(['f.yaml:1:107: YAML nested deeper than 100 levels (limit for runner files)']);
    expect(parse(`a: ${nested(99)}\n`).data).toEqual({ a: JSON.parse(nested(99)) });
  });

  it('a JSON file too: JSON.parse alone would take any depth', () => {
    const diagnostics: Diagnostic[] = [];
    const { data } = parseJsonSource(`{"x": ${nested(200_000)}}`, 'f.json', diagnostics);
    expect(data).toBeUndefined();
    expect(diagnostics.map(formatDiagnostic)).toEqual(['f.json:1:105: JSON nested deeper than 100 levels (limit for runner files)']);
  });
});
