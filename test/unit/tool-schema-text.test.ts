import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { stepIdFor } from '../../src/cli/commands/tools.js';
import { describeFields, describeType, sampleWith } from '../../src/cli/describe-tool.js';
import { buildToolArguments } from '../../src/cli/tool-arguments.js';
import type { Diagnostic } from '../../src/errors.js';

const schema = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'Where the file is' },
    width: { type: 'integer', minimum: 1, maximum: 4096, default: 512 },
    fit: { type: 'string', enum: ['cover', 'contain'] },
    tags: { type: 'array', items: { type: 'string' } },
    box: {
      type: 'object',
      description: 'The area to keep',
      properties: { left: { type: 'integer' }, top: { type: 'integer' }, note: { type: 'string' } },
      required: ['left', 'top'],
    },
    ratio: { type: ['number', 'null'] },
    anything: {},
  },
  required: ['path', 'box'],
  additionalProperties: false,
};

describe('describing a tool schema', () => {
  it('names each argument with type, required or optional, default, allowed values and description, nested objects indented', () => {
    expect(describeFields(schema)).toEqual([
      '  path      string           required  Where the file is',
      '  width     integer          optional  default 512  1 to 4096',
      '  fit       string           optional  one of "cover", "contain"',
      '  tags      array of string  optional',
      '  box       object           required  The area to keep',
      '    left  integer  required',
      '    top   integer  required',
      '    note  string   optional',
      '  ratio     number | null    optional',
      '  anything  any              optional',
    ]);
    expect(describeFields({ type: 'object' })).toEqual(['  (none)']);
    expect(describeType({ anyOf: [{ type: 'string' }, { type: 'integer' }] })).toBe('string | integer');
  });

  it('writes a with: block that is valid YAML: required arguments with typed placeholders, optional ones commented out', () => {
    const lines = sampleWith(schema);
    expect(lines[0]).toBe('with:');
    expect(lines.filter((line) => /^\s+# (width|fit|tags|ratio|anything|note):/.test(line))).toHaveLength(6);
    const parsed = parse(lines.join('\n')) as { with: Record<string, unknown> };
    expect(parsed.with).toEqual({ path: '', box: { left: 0, top: 0 } });
    // Uncommented, the optional ones are values of their types too.
    const all = parse(lines.map((line) => line.replace(/^(\s*)# /, '$1')).join('\n')) as { with: Record<string, unknown> };
    expect(all.with).toMatchObject({ width: 512, fit: 'cover', tags: [], ratio: 0, box: { left: 0, top: 0, note: '' } });
    expect(sampleWith({ type: 'object' })).toEqual(['with: {}']);
  });

  it('makes a step id of any tool name', () => {
    expect(stepIdFor('get-sum')).toBe('get-sum');
    expect(stepIdFor('files.read v2')).toBe('files_read_v2');
    expect(stepIdFor('2fa')).toBe('_2fa');
    expect(stepIdFor('logs')).toBe('logs_');
    expect(stepIdFor('x'.repeat(80))).toHaveLength(64);
  });
});

describe('runner call arguments', () => {
  const build = (pairs: Parameters<typeof buildToolArguments>[0], inputSchema: unknown = schema) => {
    const diagnostics: Diagnostic[] = [];
    const args = buildToolArguments(pairs, inputSchema, diagnostics);
    return { args, problems: diagnostics.map((d) => d.message) };
  };
  const pair = (text: string) => ({ name: text.slice(0, text.indexOf('=')), text: text.slice(text.indexOf('=') + 1) });

  it('types each value by the inputSchema: strings as written, the rest as JSON', () => {
    const { args, problems } = build(
      ['path=007', 'width=12', 'tags=["a","b"]', 'box={"left":1,"top":2}', 'ratio=null', 'anything=true', 'extra=x y'].map(pair),
    );
    expect(problems).toEqual([]);
    expect(args).toEqual({ path: '007', width: 12, tags: ['a', 'b'], box: { left: 1, top: 2 }, ratio: null, anything: true, extra: 'x y' });
  });

  it('takes a value read from a file as it is', () => {
    expect(build([{ name: 'box', value: { left: 3 }, file: 'box.json' }]).args).toEqual({ box: { left: 3 } });
  });

  it('names the argument whose value fits no type, and one given twice', () => {
    expect(build(['width=wide', 'width=2', 'width=3', 'tags=a', 'novalue'].map((text) => (text.includes('=') ? pair(text) : text))).problems).toEqual([
      'argument `width`: expected an integer, got `wide`',
      'argument `width` is given twice',
      'argument `tags`: expected a JSON array, got `a`',
      '`novalue`: expected name=value',
    ]);
  });
});
