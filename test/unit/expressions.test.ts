import { describe, it, expect } from 'vitest';
import {
  ExpressionError,
  checkCondition,
  checkTemplateString,
  evaluateCondition,
  evaluateTemplate,
  findConditionStepReferences,
  findStepReferences,
  usesStatusFunction,
  type ExpressionContext,
} from '../../src/workflow/expressions.js';

function createContext(overrides: Partial<ExpressionContext> = {}): ExpressionContext {
  return {
    inputs: { company: 'Acme', count: 3, ratio: 1.5, flag: true, tags: ['a', 'b'], size: { width: 128, height: 64 } },
    env: { HOME: '/home/me', EMPTY: undefined },
    run: { id: 'r-1', dir: '/runs/r-1', artifacts: '/artifacts' },
    workflow: { name: 'logo-to-quote' },
    trigger: { type: 'manual' },
    steps: {
      logo: { status: 'succeeded', outputs: { path: '/runs/r-1/logo.png' }, text: 'done', files: ['/runs/r-1/logo.png'], error: null },
      quote: { status: 'failed', outputs: null, text: '', files: [], error: { kind: 'tool', message: 'sheet is locked' } },
    },
    ...overrides,
  };
}

describe('evaluateTemplate', () => {
  it('keeps the type of a string that is exactly one ${{ }}', () => {
    const ctx = createContext();
    expect(evaluateTemplate('${{ inputs.count }}', ctx)).toBe(3);
    expect(evaluateTemplate('${{ inputs.flag }}', ctx)).toBe(true);
    expect(evaluateTemplate('${{ inputs.size }}', ctx)).toEqual({ width: 128, height: 64 });
    expect(evaluateTemplate('${{ inputs.tags }}', ctx)).toEqual(['a', 'b']);
    expect(evaluateTemplate('${{ steps.quote.outputs }}', ctx)).toBeNull();
  });

  it('interpolates every ${{ }} in a longer string', () => {
    const ctx = createContext();
    expect(evaluateTemplate('${{ run.dir }}/quote.xlsx', ctx)).toBe('/runs/r-1/quote.xlsx');
    expect(evaluateTemplate('Quote for ${{ inputs.company }} (${{ inputs.count }}x, ${{ inputs.ratio }}, ${{ inputs.flag }})', ctx)).toBe(
      'Quote for Acme (3x, 1.5, true)',
    );
  });

  it('interpolates objects and arrays as JSON, as toJSON prints them', () => {
    expect(evaluateTemplate('tags: ${{ inputs.tags }}', createContext())).toBe('tags: [\n  "a",\n  "b"\n]');
  });

  it('evaluates templates nested in objects and arrays, leaving keys and non-strings alone', () => {
    const result = evaluateTemplate(
      { '${{ inputs.company }}': '${{ inputs.company }}', list: ['${{ inputs.count }}', 'n=${{ inputs.count }}', 7, null, false], deep: { path: '${{ steps.logo.outputs.path }}' } },
      createContext(),
    );
    expect(result).toEqual({
      '${{ inputs.company }}': 'Acme',
      list: [3, 'n=3', 7, null, false],
      deep: { path: '/runs/r-1/logo.png' },
    });
  });

  it('yields null for a missing property and an empty string when interpolated', () => {
    const ctx = createContext();
    expect(evaluateTemplate('${{ inputs.nope }}', ctx)).toBeNull();
    expect(evaluateTemplate('${{ inputs.nope.deeper[3] }}', ctx)).toBeNull();
    expect(evaluateTemplate('${{ env.EMPTY }}', ctx)).toBeNull();
    expect(evaluateTemplate('[${{ inputs.nope }}]', ctx)).toBe('[]');
  });

  it('reads steps, files by index, item and index', () => {
    const ctx = createContext({ item: { name: 'x.png' }, index: 2 });
    expect(evaluateTemplate('${{ steps.logo.files[0] }}', ctx)).toBe('/runs/r-1/logo.png');
    expect(evaluateTemplate("${{ steps['quote'].error.kind }}", ctx)).toBe('tool');
    expect(evaluateTemplate('${{ index }}: ${{ item.name }}', ctx)).toBe('2: x.png');
    expect(evaluateTemplate('${{ item }}', createContext())).toBeNull();
  });

  it('looks properties up case-insensitively, like GitHub', () => {
    expect(evaluateTemplate('${{ INPUTS.Company }}', createContext())).toBe('Acme');
    expect(evaluateTemplate('${{ inputs.company }}', createContext({ inputs: { Company: 'Acme' } }))).toBe('Acme');
  });

  it('reads plain accesses like the evaluator does, whatever they end on', () => {
    const ctx = createContext();
    expect(evaluateTemplate('${{ inputs.count }}', ctx)).toBe(3);
    expect(evaluateTemplate('${{ inputs.flag }}', ctx)).toBe(true);
    expect(evaluateTemplate('${{ steps.quote.outputs }}', ctx)).toBeNull();
    expect(evaluateTemplate('${{ steps.quote.outputs.path }}', ctx)).toBeNull();
    expect(evaluateTemplate('${{ inputs.nope }}', ctx)).toBeNull();
    expect(evaluateTemplate('${{ env.EMPTY }}', ctx)).toBeNull();
    expect(evaluateTemplate('${{ inputs.company.length }}', ctx)).toBeNull();
    expect(evaluateTemplate('${{ inputs.tags.length }}', ctx)).toBeNull();
    expect(evaluateTemplate('${{ index }}', createContext({ index: 0 }))).toBe(0);
    // An object or array read is a copy: the arguments of one call never share objects with another step's outputs.
    const size = evaluateTemplate('${{ inputs.size }}', ctx);
    expect(size).toEqual({ width: 128, height: 64 });
    expect(size).not.toBe(ctx.inputs.size);
    expect(evaluateTemplate('${{ inputs.tags }}', ctx)).not.toBe(ctx.inputs.tags);
  });

  it('interpolates plain accesses as the evaluator writes them, whatever they end on', () => {
    // `(…)` is not a plain access: the evaluator reads it, so each pair compares the two ways.
    const values = ['text', '', 0, -0, 0.1 + 0.2, 1e21, 2 ** 53 + 2, -1.5e-7, true, false, null, undefined, Infinity, NaN, { a: 1 }, [1, 'b']];
    for (const value of values) {
      const ctx = createContext({ item: { value }, index: 7 });
      const label = String(value);
      expect(evaluateTemplate('at ${{ index }}: ${{ item.value }}!', ctx), label).toBe(evaluateTemplate('at ${{ (index) }}: ${{ (item.value) }}!', ctx));
    }
    expect(evaluateTemplate('item ${{ item }}', createContext({ item: 12.5 }))).toBe('item 12.5');
    expect(evaluateTemplate('item ${{ item }}', createContext())).toBe('item ');
  });

  it('supports the built-in functions', () => {
    const ctx = createContext();
    expect(evaluateTemplate("${{ contains(inputs.tags, 'b') }}", ctx)).toBe(true);
    expect(evaluateTemplate("${{ startsWith(run.dir, '/runs') }}", ctx)).toBe(true);
    expect(evaluateTemplate("${{ endsWith(run.dir, 'x') }}", ctx)).toBe(false);
    expect(evaluateTemplate("${{ format('{0}-{1}', inputs.company, run.id) }}", ctx)).toBe('Acme-r-1');
    expect(evaluateTemplate("${{ join(inputs.tags, '+') }}", ctx)).toBe('a+b');
    expect(evaluateTemplate('${{ toJSON(inputs.size) }}', ctx)).toBe('{\n  "width": 128,\n  "height": 64\n}');
    expect(evaluateTemplate('${{ fromJSON(\'{"a":[1,{"b":null}]}\') }}', ctx)).toEqual({ a: [1, { b: null }] });
    expect(evaluateTemplate("${{ inputs.nope || 'fallback' }}", ctx)).toBe('fallback');
    expect(evaluateTemplate('${{ steps.*.status }}', ctx)).toEqual(['succeeded', 'failed']);
  });

  it('unescapes every doubled quote in a string literal', () => {
    expect(evaluateTemplate("${{ 'it''s ''quoted''' }}", createContext())).toBe("it's 'quoted'");
  });

  it('throws an ExpressionError with the offset of the bad ${{', () => {
    const ctx = createContext();
    const thrown = (): unknown => {
      try {
        evaluateTemplate('ok ${{ inputs.count }} then ${{ fromJSON(inputs.company) }}', ctx);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const error = thrown();
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as ExpressionError).offset).toBe(28);
    expect((error as ExpressionError).expression).toBe('${{ fromJSON(inputs.company) }}');
    expect(() => evaluateTemplate('${{ github.sha }}', ctx)).toThrow(/Unrecognized named-value: 'github'/);
  });
});

describe('checkTemplateString', () => {
  it('accepts valid templates and plain text', () => {
    expect(checkTemplateString('plain text')).toEqual([]);
    expect(checkTemplateString("${{ inputs.a }}-${{ format('{0}}}', '}}') }}")).toEqual([]);
  });

  it('reports each bad ${{ at its offset', () => {
    const text = 'a ${{ inputs.x + }} b ${{ }} c ${{ inputs.y';
    const problems = checkTemplateString(text);
    expect(problems.map((p) => p.offset)).toEqual([2, 22, 31]);
    expect(problems[0]!.message).toMatch(/Unexpected symbol/);
    expect(problems[1]!.message).toMatch(/Empty expression/);
    expect(problems[2]!.message).toMatch(/Unterminated/);
  });

  it('rejects unknown contexts and functions, and status functions outside if:', () => {
    const [context] = checkTemplateString('x ${{ github.sha }}');
    expect(context).toEqual({ offset: 2, message: expect.stringMatching(/Unrecognized named-value: 'github'.*contexts are inputs, env/) });
    expect(checkTemplateString('${{ shout(inputs.a) }}')[0]!.message).toMatch(/Unrecognized function: 'shout'/);
    expect(checkTemplateString('${{ success() }}')[0]!.message).toMatch(/only in if:/);
  });
});

describe('findStepReferences', () => {
  it('finds steps.<id> and steps[<id>] inside ${{ }} only, once each', () => {
    const text = "${{ steps.logo.outputs.path }} ${{ steps['my-quote'].text }} ${{ steps.logo.status }} steps.plain";
    expect(findStepReferences(text)).toEqual(['logo', 'my-quote']);
  });

  it('finds references inside function calls and operators', () => {
    expect(findStepReferences("${{ format('{0}', steps.a.text) == steps.b.text && !steps.c.outputs }}")).toEqual(['a', 'b', 'c']);
  });

  it('finds references in conditions with and without ${{ }}', () => {
    expect(findConditionStepReferences("steps.logo.status == 'succeeded'")).toEqual(['logo']);
    expect(findConditionStepReferences("${{ steps['quote'].error }}")).toEqual(['quote']);
  });

  // Templates skip the parser for a plain `context.name...`; conditions always use it, so they are the reference.
  it.each([
    'steps.logo.outputs.path',
    ' steps.my-quote_2.text ',
    'steps',
    'steps.null.true',
    'inputs.company',
    'item',
    'index.x',
    'Steps.logo',
    'github.sha',
    'steps.1logo',
    'steps.logo.',
    'steps..logo',
    'steps.logo .text',
    'steps.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t',
  ])('judges the plain access %j as the parser does', (expression) => {
    const template = `\${{ ${expression} }}`;
    expect(checkTemplateString(template).length === 0).toBe(checkCondition(template).length === 0);
    expect(findStepReferences(template)).toEqual(findConditionStepReferences(template));
  });
});

describe('conditions', () => {
  it('evaluate with and without ${{ }}', () => {
    const ctx = createContext();
    expect(evaluateCondition("steps.logo.status == 'succeeded'", ctx)).toBe(true);
    expect(evaluateCondition("${{ steps.quote.status == 'succeeded' }}", ctx)).toBe(false);
    expect(evaluateCondition('  ${{ inputs.count > 2 }}  ', ctx)).toBe(true);
  });

  it('use GitHub truthiness', () => {
    const ctx = createContext();
    expect(evaluateCondition('inputs.nope', ctx)).toBe(false);
    expect(evaluateCondition("''", ctx)).toBe(false);
    expect(evaluateCondition('0', ctx)).toBe(false);
    expect(evaluateCondition('inputs.company', ctx)).toBe(true);
    expect(evaluateCondition('inputs.tags', ctx)).toBe(true);
  });

  it('call status functions that read ctx.job', () => {
    const failed = createContext({ job: { success: false, failure: true, cancelled: false } });
    const fine = createContext({ job: { success: true, failure: false, cancelled: false } });
    const cancelled = createContext({ job: { success: false, failure: false, cancelled: true } });
    expect(evaluateCondition('failure()', failed)).toBe(true);
    expect(evaluateCondition('${{ success() }}', failed)).toBe(false);
    expect(evaluateCondition('failure()', fine)).toBe(false);
    expect(evaluateCondition('success()', fine)).toBe(true);
    expect(evaluateCondition('always()', cancelled)).toBe(true);
    expect(evaluateCondition('cancelled()', cancelled)).toBe(true);
    expect(evaluateCondition("failure() && steps.quote.error.kind == 'tool'", failed)).toBe(true);
  });

  it('tell whether a status function is used', () => {
    expect(usesStatusFunction('always()')).toBe(true);
    expect(usesStatusFunction("${{ failure() || steps.a.status == 'failed' }}")).toBe(true);
    expect(usesStatusFunction("steps.a.status == 'failed'")).toBe(false);
  });

  it('report problems at the bad token (bare) or at the ${{ (wrapped)', () => {
    expect(checkCondition("steps.a.status == 'x'")).toEqual([]);
    expect(checkCondition('inputs.a ===')).toEqual([{ offset: 11, message: expect.stringMatching(/Unexpected symbol: '='/) }]);
    expect(checkCondition("inputs.a &&\n  'x' = 1")[0]!.offset).toBe(18);
    expect(checkCondition('  ${{ github.ref }}')).toEqual([{ offset: 2, message: expect.stringMatching(/'github'/) }]);
    expect(checkCondition('')[0]!.message).toMatch(/Empty condition/);
  });

  it('reject text around ${{ }}, which GitHub would treat as an always-true string', () => {
    expect(checkCondition('${{ inputs.a }} && ${{ inputs.b }}')[0]!.message).toMatch(/always true/);
    expect(() => evaluateCondition('x ${{ inputs.flag }}', createContext())).toThrow(ExpressionError);
  });
});
