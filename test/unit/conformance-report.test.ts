import { describe, expect, it } from 'vitest';
import { formatTable, summarize } from '../../scripts/conformance-report.mjs';
import { knownCalls, sampleArguments } from '../../scripts/conformance-scenarios.mjs';

const check = (id: string, status: string, errorMessage?: string) => ({ id, status, errorMessage, description: `${id} description` });

describe('conformance verdicts', () => {
  it("names the first failing check, then what the client said, and counts the rest", () => {
    const verdict = summarize({
      code: 1,
      killed: false,
      suiteOutput: '',
      checks: [check('ok', 'SUCCESS'), check('prm-discovery', 'FAILURE', 'Client did not fetch PRM'), check('token', 'FAILURE')],
      clientStderr: 'progress line\nrunner-client: runner auth login exited 1: refused\n',
    });
    expect(verdict).toMatchObject({ passed: false, failedChecks: ['prm-discovery', 'token'] });
    expect(verdict.reason).toBe('prm-discovery: Client did not fetch PRM (+1 more failed) | client: runner auth login exited 1: refused');
  });

  it('a warning alone fails a scenario, and says which', () => {
    const verdict = summarize({ code: 1, killed: false, suiteOutput: '', checks: [check('scope', 'WARNING', 'SHOULD use the scope')], clientStderr: '' });
    expect(verdict.reason).toBe('warning scope: SHOULD use the scope');
  });

  it('prints clients side by side with a totals line per suite version', () => {
    const table = formatTable(
      [
        { suite: '0.1.16', client: 'runner', scenario: 'initialize', passed: true, reason: '' },
        { suite: '0.1.16', client: 'raw', scenario: 'initialize', passed: true, reason: '' },
        { suite: '0.1.16', client: 'runner', scenario: 'auth/dpop', passed: false, reason: 'client: runner does not support DPoP' },
        { suite: '0.1.16', client: 'raw', scenario: 'auth/dpop', passed: true, reason: '' },
      ],
      ['runner', 'raw'],
    );
    expect(table).toContain('auth/dpop   0.1.16          FAIL    pass    runner: client: runner does not support DPoP');
    expect(table).toContain('totals 0.1.16: runner 1/2, raw 2/2');
  });
});

describe('conformance scenario plans', () => {
  it('fills required arguments from the schema: defaults, enums, numbers counting from 2', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'integer' }, mode: { enum: ['x', 'y'] }, name: { type: 'string', default: 'n' }, note: { type: 'string' } },
      required: ['a', 'b', 'mode', 'name'],
    };
    expect(sampleArguments(schema)).toEqual({ a: 2, b: 3, mode: 'x', name: 'n' });
  });

  it("takes the suite's own tool calls from the scenario context over any plan", () => {
    const toolCalls = [{ name: 'test_custom_headers', arguments: { region: 'us-west1' } }];
    expect(knownCalls('http-custom-headers', { toolCalls })).toEqual(toolCalls);
    expect(knownCalls('auth/metadata-default', {})).toEqual([{ name: 'test-tool', arguments: {} }]);
    expect(knownCalls('http-invalid-tool-headers', {})).toBeUndefined();
  });
});
