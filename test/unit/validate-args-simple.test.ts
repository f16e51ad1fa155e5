import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { checkToolArguments } from '../../src/scheduler/validate-args.js';

// checkToolArguments judges arguments of simple schemas without ajv. Whatever path it takes,
// its verdict must be ajv's, with the options the runner gives ajv: each schema and value
// below is checked against ajv itself, and the messages of a rejection are ajv's.
const options = { allErrors: true, strict: false, validateFormats: false, validateSchema: false, verbose: true };
const draft07 = new Ajv(options);
const draft2020 = new Ajv2020(options);

const schemas: Record<string, Record<string, unknown>> = {
  flat: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'shown', format: 'email' },
      delayMs: { type: 'integer', minimum: 0, maximum: 1000 },
      ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      flag: { type: 'boolean', default: false },
      note: { type: ['string', 'null'], minLength: 2, maxLength: 3 },
      mode: { enum: ['a', 'b', 1] },
      tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2 },
      nested: { type: 'object', properties: { deep: { type: 'integer' } }, required: ['deep'], additionalProperties: false },
      anything: {},
    },
    required: ['text'],
    additionalProperties: false,
  },
  open: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { toString: { type: 'string' } } },
  // Keywords the quick path leaves to ajv.
  pattern: { type: 'object', properties: { code: { type: 'string', pattern: '^[a-z]+$' } } },
  nullable: { type: 'object', properties: { n: { type: 'string', nullable: true } } },
  tuple: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] } } },
  unknownType: { type: 'object', properties: { x: { type: 'text' } } },
};

const values: unknown[] = [
  { text: 'hi' },
  { text: 'hi', delayMs: 0, ratio: 0.5, flag: true, note: null, mode: 1, tags: ['x'], nested: { deep: 2 }, anything: [{}] },
  {},
  { text: 3 },
  { text: 'hi', extra: 1 },
  { text: 'hi', delayMs: -1 },
  { text: 'hi', delayMs: 1.5 },
  { text: 'hi', delayMs: 1001 },
  { text: 'hi', delayMs: Number.NaN },
  { text: 'hi', delayMs: Number.POSITIVE_INFINITY },
  { text: 'hi', ratio: 0 },
  { text: 'hi', ratio: 1 },
  { text: 'hi', note: 'x' },
  { text: 'hi', note: '😀😀' },
  { text: 'hi', note: 'abcd' },
  { text: 'hi', mode: 'c' },
  { text: 'hi', mode: '1' },
  { text: 'hi', tags: [] },
  { text: 'hi', tags: ['a', 'b', 'c'] },
  { text: 'hi', tags: [1] },
  { text: 'hi', nested: {} },
  { text: 'hi', nested: { deep: 1, more: 2 } },
  { text: undefined },
  { toString: 'x' },
  { code: 'abc' },
  { code: 'ABC' },
  { n: null },
  { pair: ['a', 1] },
  { pair: [1, 'a'] },
  { x: 1 },
  [],
  'text',
  null,
];

describe('checkToolArguments on simple schemas', () => {
  for (const [name, schema] of Object.entries(schemas)) {
    it(`agrees with ajv on every value: ${name}`, () => {
      const { $schema, ...body } = schema;
      const ajv = typeof $schema === 'string' && $schema.includes('draft-07') ? draft07 : draft2020;
      let validate: ReturnType<typeof ajv.compile> | undefined;
      try {
        validate = ajv.compile(body);
      } catch {
        validate = undefined; // a schema ajv cannot compile is not held against the call
      }
      for (const value of values) {
        const problems = checkToolArguments({ inputSchema: schema as never }, value);
        const valid = validate ? validate(value) : true;
        expect({ value, valid: problems.length === 0 }).toEqual({ value, valid });
      }
    });
  }

  it('names the problems as ajv reports them', () => {
    const problems = checkToolArguments({ inputSchema: schemas.flat as never }, { text: 3, delayMs: -1, extra: true });
    expect(problems).toEqual(['unknown argument `extra`', '`text` must be string, got a number (3)', '`delayMs` must be >= 0']);
  });

  it('names a union of types in words', () => {
    const schema = { type: 'object', properties: { id: { type: ['string', 'number'] }, tag: { type: ['string', 'integer', 'null'] } } };
    expect(checkToolArguments({ inputSchema: schema as never }, { id: true, tag: [] })).toEqual([
      '`id` must be string or number, got a boolean (true)',
      '`tag` must be string, integer or null, got an array',
    ]);
  });
});
