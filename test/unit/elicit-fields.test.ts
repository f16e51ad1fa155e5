import { describe, expect, it } from 'vitest';
import type { ElicitationRecord } from '../../src/artifacts/run-record.js';
import { createElicitationHandler } from '../../src/scheduler/elicit.js';
import type { ExpressionContext } from '../../src/workflow/expressions.js';
import type { Step } from '../../src/workflow/types.js';

// Field names in a question are the app's: `toString` or `__proto__` are fields like any other,
// never something a plain object has already.
const step = { id: 'ask', app: 'faulty', tool: 'ask', uses: 'faulty.ask', with: {}, needs: [], continueOnError: false } as unknown as Step;
const ctx = {} as ExpressionContext;

describe('elicitation fields named like Object.prototype members', () => {
  it('a required field `toString` is not taken as given by the workflow: with nobody to ask, the question is declined', async () => {
    const log: ElicitationRecord[] = [];
    const handler = createElicitationHandler(step, ctx, undefined, new AbortController().signal, log);
    const answer = await handler({ message: 'name?', requestedSchema: { properties: { toString: { type: 'string' } }, required: ['toString'] } });
    expect(answer).toEqual({ action: 'decline' });
    expect(log).toEqual([{ message: 'name?', action: 'decline', answered: [], source: 'none' }]);
  });

  it('a field `__proto__` with a default is answered as a field, and the answer keeps a plain prototype', async () => {
    const handler = createElicitationHandler({ ...step, elicit: { other: 'x' } } as Step, ctx, undefined, new AbortController().signal, []);
    const properties = JSON.parse('{"__proto__": {"type": "string", "default": "d"}, "other": {"type": "string"}}') as Record<string, unknown>;
    const answer = await handler({ message: 'q', requestedSchema: { properties } });
    expect(answer.action).toBe('accept');
    expect(Object.getPrototypeOf(answer.content)).toBe(Object.prototype);
    expect(JSON.stringify(answer.content)).toBe('{"__proto__":"d","other":"x"}');
  });
});
