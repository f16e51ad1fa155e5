import { describe, expect, it } from 'vitest';
import { CheckTimeLimitError, hasPattern, runWithin } from '../../src/apps/bounded-check.js';
import { BoundedJsonSchemaValidator } from '../../src/apps/bounded-validation.js';

// `^(a+)+$` against 40 `a`s and a `!` would take days: only the time limit ends these checks.
const BACKTRACKS = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } as const;
const EVIL = { s: `${'a'.repeat(40)}!` };

describe('checks against a schema with a pattern are held to a time limit', () => {
  it('runWithin stops a regular expression midway and says so; the process goes on', () => {
    const backtracking = /^(a+)+$/;
    expect(() => runWithin(() => backtracking.test(EVIL.s), 50)).toThrow(CheckTimeLimitError);
    expect(runWithin(() => backtracking.test('aaaa'), 50)).toBe(true);
    expect(() => runWithin(() => JSON.parse('{'), 50)).toThrow(SyntaxError);
  });

  it('the validator refuses a value it could not check in time, naming the limit, and judges the rest as ajv does', () => {
    const validator = new BoundedJsonSchemaValidator(50);
    expect(validator.getValidator(BACKTRACKS)(EVIL)).toEqual({
      valid: false,
      data: undefined,
      errorMessage: 'checking it was stopped after 50ms: a `pattern` in the schema backtracks too much on this value',
    });
    expect(validator.getValidator(BACKTRACKS)({ s: 'aaa' })).toMatchObject({ valid: true });
    expect(validator.getValidator(BACKTRACKS)({ s: 'b' })).toMatchObject({ valid: false, errorMessage: expect.stringContaining('must match pattern') });
    expect(validator.getValidator({ type: 'object', required: ['x'] })({})).toMatchObject({ valid: false });
  });

  it('hasPattern finds pattern and patternProperties at any depth, and calls a schema too large to walk one that has', () => {
    expect(hasPattern({ type: 'object', properties: { a: { type: 'string' } } })).toBe(false);
    expect(hasPattern({ properties: { a: { items: [{ anyOf: [{ pattern: 'x' }] }] } } })).toBe(true);
    expect(hasPattern({ patternProperties: { '^x': {} } })).toBe(true);
    expect(hasPattern({ properties: { pattern: { type: 'string' } } })).toBe(false);
    const wide = { properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    expect(hasPattern(wide)).toBe(true);
  });
});
