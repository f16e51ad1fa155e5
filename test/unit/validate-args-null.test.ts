import { describe, expect, it } from 'vitest';
import { checkToolArguments, coerceToolArguments } from '../../src/scheduler/validate-args.js';

// The conformance suite's http-custom-headers sends `verbose: null` for an optional boolean
// and expects the call to go out without its Mcp-Param header.
describe('null arguments', () => {
  const tool = {
    inputSchema: {
      type: 'object' as const,
      properties: {
        region: { type: 'string' },
        verbose: { type: 'boolean' },
        note: { type: ['string', 'null'] },
        anything: {},
        nested: { type: 'object', properties: { debug: { type: 'boolean' } } },
      },
      required: ['region'],
    },
  };

  it('leaves out an optional argument given as null where its schema takes no null, top level and nested', () => {
    const args = { region: 'us-east1', verbose: null, nested: { debug: null } };
    const sent = coerceToolArguments(tool, args);
    expect(sent).toEqual({ region: 'us-east1', nested: {} });
    expect(checkToolArguments(tool, sent)).toEqual([]);
    expect(args.verbose).toBeNull(); // the input is not changed
  });

  it('passes null through where the schema takes it, or names no type', () => {
    const args = { region: 'x', note: null, anything: null };
    expect(coerceToolArguments(tool, args)).toBe(args);
  });

  it('still refuses a required argument given as null', () => {
    const sent = coerceToolArguments(tool, { region: null });
    expect(checkToolArguments(tool, sent)).toEqual(['`region` must be string, got null']);
  });
});
