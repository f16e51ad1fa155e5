import { Evaluator, data, type Expr } from '@actions/expressions';
import { Binary, ContextAccess, FunctionCall, Grouping, IndexAccess, Literal, Logical, Unary } from '@actions/expressions/ast';
import type { FunctionDefinition } from '@actions/expressions/funcs/info';
import { truthy } from '@actions/expressions/result';
import { coerceToString, LazyDictionary, plainToString, toPlain } from './expression-data.js';
import { remember } from './bounded-cache.js';
import { describeProblem, parseCached, readPlainAccess, readPlainPath, STATUS_FUNCTION_NAMES } from './expression-parser.js';
import { splitTemplateCached, type ExpressionPart } from './template-parts.js';
import type { TemplateValue } from './types.js';
import { messageOf } from '../errors.js';

// GitHub Actions expressions in workflows (`${{ }}` in templates, `if:`
// conditions): syntax checks, the steps they reference, and evaluation.

/** What `steps.<id>` shows an expression. */
export interface StepView {
  status: string;
  outputs: unknown;
  text: unknown;
  files: unknown;
  error: { kind: string; message: string } | null;
}

/** Everything an expression can read. */
export interface ExpressionContext {
  inputs: Record<string, unknown>;
  env: Record<string, string | undefined>;
  run: { id: string; dir: string; artifacts: string };
  workflow: { name: string };
  trigger: Record<string, unknown>;
  steps: Record<string, StepView>;
  item?: unknown;
  index?: number;
  /** For status functions in `if`: whether every needed step succeeded, whether any failed. */
  job?: { success: boolean; failure: boolean; cancelled: boolean };
}

/** An expression that cannot be parsed or evaluated. */
export class ExpressionError extends Error {
  /** The offending `${{ ... }}` as written, or the bare condition. */
  readonly expression: string;
  /** Char offset in the template string (or condition) where the bad `${{` (or bare expression) starts. */
  readonly offset?: number;

  constructor(message: string, expression: string, offset?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ExpressionError';
    this.expression = expression;
    this.offset = offset;
  }
}

/** One problem found by a check, at a char offset of the text checked. */
export interface ExpressionProblem {
  message: string;
  offset: number;
}

// ---------------------------------------------------------------------------
// Conditions: `if:` with or without ${{ }}

/** An `if:` as the expression to parse, or what is wrong with its `${{ }}` wrapping. */
export type ConditionSource =
  | { ok: true; source: string; raw: string; /** where problems at a position of `source` are reported */ at: (position: number) => number }
  | { ok: false; problem: ExpressionProblem };

/** Unwraps an `if:` written with ${{ }}; a bare condition is its own source. */
export function readCondition(text: string): ConditionSource {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, problem: { message: 'Empty condition', offset: 0 } };
  if (!text.includes('${{')) return { ok: true, source: text, raw: text, at: (position) => position };
  const leading = text.length - text.trimStart().length;
  const { parts, unterminatedAt } = splitTemplateCached(trimmed);
  if (unterminatedAt !== undefined) {
    return { ok: false, problem: { message: 'Unterminated ${{: no closing }}', offset: leading + unterminatedAt } };
  }
  const only = parts[0];
  if (parts.length === 1 && typeof only === 'object') {
    return { ok: true, source: only.source, raw: only.raw, at: () => leading };
  }
  // GitHub would turn "${{ a }} && ${{ b }}" into a non-empty string, which is always true.
  return {
    ok: false,
    problem: {
      message: 'A condition must be one ${{ }} or a bare expression; text around ${{ }} makes it a string that is always true',
      offset: text.indexOf('${{'),
    },
  };
}

function parseCondition(text: string): { expr: Expr; raw: string; offset: number } | ExpressionProblem {
  const condition = readCondition(text);
  if (!condition.ok) return condition.problem;
  const parsed = parseCached(condition.source, 'condition');
  if (!parsed.ok) return { message: describeProblem(parsed, condition.raw), offset: condition.at(parsed.position) };
  return { expr: parsed.expr, raw: condition.raw, offset: condition.at(0) };
}

// ---------------------------------------------------------------------------
// Checks

/** Syntax-checks every ${{ }} in one template string; offsets point at the `${{` that is wrong. */
export function checkTemplateString(text: string): ExpressionProblem[] {
  if (!text.includes('${{')) return [];
  const { parts, unterminatedAt } = splitTemplateCached(text);
  const problems: ExpressionProblem[] = [];
  for (const part of parts) {
    if (typeof part === 'string' || readPlainAccess(part.source) !== undefined) continue;
    const parsed = parseCached(part.source, 'template');
    if (!parsed.ok) problems.push({ message: describeProblem(parsed, part.raw), offset: part.start });
  }
  if (unterminatedAt !== undefined) {
    problems.push({ message: 'Unterminated ${{: no closing }}', offset: unterminatedAt });
  }
  return problems;
}

/** Syntax-checks an `if:` written with or without ${{ }}; bare expressions report the offset of the bad token. */
export function checkCondition(text: string): ExpressionProblem[] {
  const parsed = parseCondition(text);
  return 'expr' in parsed ? [] : [parsed];
}

/** Step ids referenced as steps.<id> / steps['<id>'] in the ${{ }} parts of one template string. */
export function findStepReferences(text: string): string[] {
  if (!text.includes('${{')) return [];
  const ids = new Set<string>();
  for (const part of splitTemplateCached(text).parts) {
    if (typeof part === 'string') continue;
    const plain = readPlainAccess(part.source);
    if (plain !== undefined) {
      if (plain !== null) ids.add(plain);
      continue;
    }
    const parsed = parseCached(part.source, 'template');
    if (parsed.ok) collectStepReferences(parsed.expr, ids);
  }
  return [...ids];
}

/** Step ids referenced in an `if:` condition (with or without ${{ }}). */
export function findConditionStepReferences(text: string): string[] {
  const parsed = parseCondition(text);
  const ids = new Set<string>();
  if ('expr' in parsed) collectStepReferences(parsed.expr, ids);
  return [...ids];
}

/** True when the condition calls success(), failure(), always() or cancelled(); false when it does not parse. */
export function usesStatusFunction(text: string): boolean {
  const parsed = parseCondition(text);
  if (!('expr' in parsed)) return false;
  let found = false;
  visitNodes(parsed.expr, (node) => {
    if (node instanceof FunctionCall && STATUS_FUNCTION_NAMES.includes(node.functionName.lexeme.toLowerCase())) found = true;
  });
  return found;
}

function collectStepReferences(expr: Expr, ids: Set<string>): void {
  visitNodes(expr, (node) => {
    if (
      node instanceof IndexAccess &&
      node.expr instanceof ContextAccess &&
      node.expr.name.lexeme.toLowerCase() === 'steps' &&
      node.index instanceof Literal &&
      node.index.literal.kind === data.Kind.String
    ) {
      ids.add(node.index.literal.value);
    }
  });
}

/** Visits every node in source order (pre-order, left to right). */
function visitNodes(root: Expr, visit: (node: Expr) => void): void {
  const stack: Expr[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    visit(node);
    const children: Expr[] =
      node instanceof Binary ? [node.left, node.right]
      : node instanceof Logical ? node.args
      : node instanceof FunctionCall ? node.args
      : node instanceof IndexAccess ? [node.expr, node.index]
      : node instanceof Unary ? [node.expr]
      : node instanceof Grouping ? [node.group]
      : [];
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
}

// ---------------------------------------------------------------------------
// Evaluation

/** Evaluates a template tree: a lone ${{ }} keeps its type; other strings interpolate. Throws ExpressionError. */
export function evaluateTemplate(value: TemplateValue, ctx: ExpressionContext): unknown {
  let context: data.Dictionary | undefined;
  return evaluateValue(value, { ctx, data: () => (context ??= createContextData(ctx)) });
}

/** The context of one evaluation: as it is, and as expression data (made on first need). */
interface EvaluationContext {
  ctx: ExpressionContext;
  data: () => data.Dictionary;
}

/** Evaluates an `if:` (with or without ${{ }}) to a boolean by GitHub truthiness. */
export function evaluateCondition(text: string, ctx: ExpressionContext): boolean {
  const parsed = parseCondition(text);
  if (!('expr' in parsed)) throw new ExpressionError(parsed.message, text, parsed.offset);
  const result = evaluateParsed(parsed.expr, createContextData(ctx), parsed.raw, parsed.offset, createStatusFunctions(ctx.job));
  return truthy(result);
}

function evaluateValue(value: TemplateValue, context: EvaluationContext): unknown {
  if (typeof value === 'string') return evaluateString(value, context);
  if (Array.isArray(value)) return value.map((entry) => evaluateValue(entry, context));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, evaluateValue(entry, context)]));
  }
  return value;
}

function evaluateString(text: string, context: EvaluationContext): unknown {
  if (!text.includes('${{')) return text;
  const { parts, unterminatedAt } = splitTemplateCached(text);
  if (unterminatedAt !== undefined) {
    throw new ExpressionError('Unterminated ${{: no closing }}', text.slice(unterminatedAt), unterminatedAt);
  }
  const evaluatePart = (part: ExpressionPart): data.ExpressionData => {
    const parsed = parseCached(part.source, 'template');
    if (!parsed.ok) throw new ExpressionError(describeProblem(parsed, part.raw), part.raw, part.start);
    return evaluateParsed(parsed.expr, context.data(), part.raw, part.start);
  };
  const only = parts[0];
  if (parts.length === 1 && typeof only === 'object') {
    const direct = readPlainValue(only.source, context.ctx);
    return direct !== undefined ? direct : toPlain(evaluatePart(only));
  }
  let result = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      result += part;
      continue;
    }
    const direct = readPlainValue(part.source, context.ctx);
    result += direct !== undefined ? plainToString(direct) : coerceToString(evaluatePart(part));
  }
  return result;
}

function evaluateParsed(
  expr: Expr,
  context: data.Dictionary,
  raw: string,
  offset: number,
  functions?: Map<string, FunctionDefinition>,
): data.ExpressionData {
  try {
    return new Evaluator(expr, context, functions).evaluate();
  } catch (error) {
    const reason = messageOf(error);
    throw new ExpressionError(`Could not evaluate \`${raw}\`: ${reason}`, raw, offset, { cause: error });
  }
}

/** The library's Evaluator takes extra functions by lower-case name; these read the job's state. */
function createStatusFunctions(job: ExpressionContext['job']): Map<string, FunctionDefinition> {
  const state = job ?? { success: true, failure: false, cancelled: false };
  const define = (name: string, value: () => boolean): [string, FunctionDefinition] => [
    name,
    { name, minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(value()) },
  ];
  return new Map([
    define('success', () => state.success && !state.cancelled),
    define('failure', () => state.failure),
    define('always', () => true),
    define('cancelled', () => state.cancelled),
  ]);
}

const plainPaths = new Map<string, ReturnType<typeof readPlainPath> | null>();

/**
 * What a plain access (`steps.a.outputs.text`, `item`) reads, without the
 * evaluator, when every name matches a property exactly and it ends on a
 * string, finite number, boolean or null: the value the evaluator would give.
 * Undefined when the evaluator must judge (a name in other case, an array or
 * string on the way, an object or a missing property at the end).
 */
function readPlainValue(source: string, ctx: ExpressionContext): unknown {
  let plain = plainPaths.get(source);
  if (plain === undefined) plain = remember(plainPaths, source, readPlainPath(source) ?? null);
  if (!plain) return undefined;
  let value: unknown =
    plain.context === 'item' ? (ctx.item ?? null) : plain.context === 'index' ? (ctx.index ?? null) : ctx[plain.context as keyof ExpressionContext];
  for (const name of plain.path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, name)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  const primitive = value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
  return primitive ? value : undefined;
}

/** The context as expression data; each part converts only when an expression reads it. */
function createContextData(ctx: ExpressionContext): data.Dictionary {
  return new LazyDictionary({
    inputs: ctx.inputs,
    env: ctx.env,
    run: ctx.run,
    workflow: ctx.workflow,
    trigger: ctx.trigger,
    steps: ctx.steps,
    item: ctx.item ?? null,
    index: ctx.index ?? null,
  });
}
