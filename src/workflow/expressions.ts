import {
  Evaluator,
  Lexer,
  Parser,
  data,
  wellKnownFunctions,
  ExpressionError as ActionsExpressionError,
  type Expr,
} from '@actions/expressions';
import { Binary, ContextAccess, FunctionCall, Grouping, IndexAccess, Literal, Logical, Unary } from '@actions/expressions/ast';
import { TokenType, type Token } from '@actions/expressions/lexer';
import type { FunctionDefinition, FunctionInfo } from '@actions/expressions/funcs/info';
import { truthy } from '@actions/expressions/result';
import type { TemplateValue } from './types.js';

/** What `steps.<id>` shows an expression. */
export interface StepView {
  status: string;
  outputs: unknown;
  text: unknown;
  files: unknown;
  error: { kind: string; message: string } | null;
}

/** Everything an expression can read (DESIGN.md §4). */
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

const CONTEXT_NAMES = ['inputs', 'env', 'run', 'workflow', 'trigger', 'steps', 'item', 'index'];
const STATUS_FUNCTION_NAMES = ['success', 'failure', 'always', 'cancelled'];
const STATUS_FUNCTIONS: FunctionInfo[] = STATUS_FUNCTION_NAMES.map((name) => ({ name, minArgs: 0, maxArgs: 0 }));
const BUILT_IN_FUNCTION_NAMES = Object.values(wellKnownFunctions).map((f) => `${f.name}()`);

type Mode = 'template' | 'condition';

// ---------------------------------------------------------------------------
// Splitting a template string into literal text and ${{ }} parts

interface ExpressionPart {
  /** The text between `${{` and `}}`. */
  source: string;
  /** Offset of `${{` in the template string. */
  start: number;
  /** `${{ ... }}` as written. */
  raw: string;
}

interface TemplateParts {
  parts: (string | ExpressionPart)[];
  /** Offset of a `${{` that has no closing `}}`; scanning stopped there. */
  unterminatedAt?: number;
}

/** Splits text at each `${{ ... }}`; a `}}` inside a quoted string literal does not close it. */
function splitTemplate(text: string): TemplateParts {
  const parts: (string | ExpressionPart)[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf('${{', from);
    if (open < 0) break;
    if (open > from) parts.push(text.slice(from, open));
    let close = -1;
    let inString = false;
    for (let i = open + 3; i < text.length; i++) {
      const c = text[i];
      // `''` (an escaped quote) toggles twice, so it stays inside the string.
      if (c === "'") inString = !inString;
      else if (!inString && c === '}' && text[i + 1] === '}') {
        close = i;
        break;
      }
    }
    if (close < 0) return { parts, unterminatedAt: open };
    parts.push({ source: text.slice(open + 3, close), start: open, raw: text.slice(open, close + 2) });
    from = close + 2;
  }
  if (from < text.length) parts.push(text.slice(from));
  return { parts };
}

// ---------------------------------------------------------------------------
// Parsing, cached by text: a 1,000-step chain evaluates the same templates many times.

type Parsed = { ok: true; expr: Expr } | { ok: false; message: string; hint?: string; position: number };

/** "<what is wrong> in `<expression>`; <what is allowed>". */
function describeProblem(parsed: Parsed & { ok: false }, raw: string): string {
  const where = `${parsed.message} in \`${raw}\``;
  return parsed.hint === undefined ? where : `${where}; ${parsed.hint}`;
}

// Texts come from workflow files, so the caches stay small; the cap only bounds
// memory in a long-lived `watch` process that reloads edited workflows.
const CACHE_LIMIT = 10_000;
const templatePartsCache = new Map<string, TemplateParts>();
const parseCaches: Record<Mode, Map<string, Parsed>> = { template: new Map(), condition: new Map() };

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

function splitTemplateCached(text: string): TemplateParts {
  return templatePartsCache.get(text) ?? remember(templatePartsCache, text, splitTemplate(text));
}

function parseCached(source: string, mode: Mode): Parsed {
  const cache = parseCaches[mode];
  return cache.get(source) ?? remember(cache, source, parseExpression(source, mode));
}

// `steps.logo.outputs.path` or `inputs.company` (a context and property names)
// is most of what a large workflow writes, and is valid as written; the full
// parser (about 25 µs a call) made checking 10,000 steps take 300 ms.
const PLAIN_ACCESS = new RegExp(`^\\s*(${CONTEXT_NAMES.join('|')})((?:\\.[A-Za-z_][\\w-]*){0,16})\\s*$`);

/** For a plain context access, the step it reads (`steps.<id>...`) or null; undefined when the parser must judge. */
function readPlainAccess(source: string): string | null | undefined {
  const match = PLAIN_ACCESS.exec(source);
  if (!match) return undefined;
  return match[1] === 'steps' && match[2] ? match[2].slice(1).split('.', 1)[0]! : null;
}

function parseExpression(source: string, mode: Mode): Parsed {
  try {
    const { tokens } = new Lexer(source).lex();
    unescapeStringTokens(tokens);
    const functions = mode === 'condition' ? STATUS_FUNCTIONS : [];
    // Typed as Expr, but parse() returns undefined when there are no tokens.
    const expr = new Parser(tokens, CONTEXT_NAMES, functions).parse() as Expr | undefined;
    if (expr === undefined) return { ok: false, message: 'Empty expression', position: 0 };
    return { ok: true, expr };
  } catch (error) {
    return describeParseError(error, source, mode);
  }
}

/** The lexer unescapes only the first `''` of a string literal (value.replace("''", "'")); redo it for all. */
function unescapeStringTokens(tokens: Token[]): void {
  for (const token of tokens) {
    if (token.type === TokenType.STRING) token.value = token.lexeme.slice(1, -1).replaceAll("''", "'");
  }
}

/** The parser reports a line and column; the lexer throws a plain Error naming a 1-based position. */
function describeParseError(error: unknown, source: string, mode: Mode): Parsed & { ok: false } {
  const text = error instanceof Error ? error.message : String(error);
  let hint: string | undefined;
  let message = text.replace(/\. Located at position \d+ within expression: [\s\S]*$/, '');
  let position = 0;
  if (error instanceof ActionsExpressionError) {
    position = offsetOfLineColumn(source, error.pos.line, error.pos.column);
  } else {
    const located = /Located at position (\d+)/.exec(text);
    if (located) position = Number(located[1]) - 1;
  }
  if (message === 'ErrorExceededMaxLength') message = 'Expression is longer than 21000 characters';
  if (message.startsWith('Unrecognized named-value')) {
    hint = `contexts are ${CONTEXT_NAMES.join(', ')}`;
  } else if (message.startsWith('Unrecognized function')) {
    hint =
      mode === 'condition'
        ? `functions are ${[...BUILT_IN_FUNCTION_NAMES, ...STATUS_FUNCTION_NAMES.map((n) => `${n}()`)].join(', ')}`
        : `functions are ${BUILT_IN_FUNCTION_NAMES.join(', ')} (status functions such as success() work only in if:)`;
  }
  return { ok: false, message, hint, position };
}

function offsetOfLineColumn(source: string, line: number, column: number): number {
  let offset = 0;
  for (let i = 0; i < line; i++) {
    const newline = source.indexOf('\n', offset);
    if (newline < 0) break;
    offset = newline + 1;
  }
  return offset + column;
}

// ---------------------------------------------------------------------------
// Conditions: `if:` with or without ${{ }}

type ConditionSource =
  | { ok: true; source: string; raw: string; /** where parse errors are reported */ at: (position: number) => number }
  | { ok: false; problem: ExpressionProblem };

function readCondition(text: string): ConditionSource {
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
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}

// ---------------------------------------------------------------------------
// Evaluation

/** Evaluates a template tree: a lone ${{ }} keeps its type; other strings interpolate. Throws ExpressionError. */
export function evaluateTemplate(value: TemplateValue, ctx: ExpressionContext): unknown {
  return evaluateValue(value, createContextData(ctx));
}

/** Evaluates an `if:` (with or without ${{ }}) to a boolean by GitHub truthiness. */
export function evaluateCondition(text: string, ctx: ExpressionContext): boolean {
  const parsed = parseCondition(text);
  if (!('expr' in parsed)) throw new ExpressionError(parsed.message, text, parsed.offset);
  const result = evaluateParsed(parsed.expr, createContextData(ctx), parsed.raw, parsed.offset, createStatusFunctions(ctx.job));
  return truthy(result);
}

function evaluateValue(value: TemplateValue, context: data.Dictionary): unknown {
  if (typeof value === 'string') return evaluateString(value, context);
  if (Array.isArray(value)) return value.map((entry) => evaluateValue(entry, context));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, evaluateValue(entry, context)]));
  }
  return value;
}

function evaluateString(text: string, context: data.Dictionary): unknown {
  if (!text.includes('${{')) return text;
  const { parts, unterminatedAt } = splitTemplateCached(text);
  if (unterminatedAt !== undefined) {
    throw new ExpressionError('Unterminated ${{: no closing }}', text.slice(unterminatedAt), unterminatedAt);
  }
  const evaluatePart = (part: ExpressionPart): data.ExpressionData => {
    const parsed = parseCached(part.source, 'template');
    if (!parsed.ok) throw new ExpressionError(describeProblem(parsed, part.raw), part.raw, part.start);
    return evaluateParsed(parsed.expr, context, part.raw, part.start);
  };
  const only = parts[0];
  if (parts.length === 1 && typeof only === 'object') return toPlain(evaluatePart(only));
  let result = '';
  for (const part of parts) result += typeof part === 'string' ? part : coerceToString(evaluatePart(part));
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
    const reason = error instanceof Error ? error.message : String(error);
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

function coerceToString(value: data.ExpressionData): string {
  // Objects and arrays interpolate as toJSON() would print them, not as "Object".
  return value.primitive ? value.coerceString() : JSON.stringify(toPlain(value), null, 2);
}

// ---------------------------------------------------------------------------
// Converting between JS values and @actions/expressions data

const NULL = new data.Null();

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

/** Converts a JS value; objects convert lazily, so reading steps.a.outputs.x never copies all the steps. */
function toData(value: unknown): data.ExpressionData {
  switch (typeof value) {
    case 'string':
      return new data.StringData(value);
    case 'number':
      return new data.NumberData(value);
    case 'boolean':
      return new data.BooleanData(value);
    case 'bigint':
      return new data.NumberData(Number(value));
    case 'object': {
      if (value === null) return NULL;
      if (Array.isArray(value)) {
        const array = new data.Array();
        for (const entry of value as unknown[]) array.add(toData(entry));
        return array;
      }
      if (value instanceof Date) return new data.StringData(value.toISOString());
      return new LazyDictionary(value as Record<string, unknown>);
    }
    default:
      return NULL; // undefined, functions, symbols
  }
}

/** Converts a result back to plain JSON-like JS. */
function toPlain(value: data.ExpressionData): unknown {
  switch (value.kind) {
    case data.Kind.Null:
      return null;
    case data.Kind.Boolean:
    case data.Kind.Number:
    case data.Kind.String:
      return value.value;
    case data.Kind.Array:
      return value.values().map((entry) => toPlain(entry));
    case data.Kind.Dictionary:
      // fromEntries defines properties, so a "__proto__" key stays a plain key.
      return Object.fromEntries(value.pairs().map((pair) => [pair.key, toPlain(pair.value)]));
    default:
      return null;
  }
}

/**
 * A read-only Dictionary over a JS object that converts each property on first
 * read. Lookup is case-insensitive like GitHub's, preferring an exact match.
 */
class LazyDictionary extends data.Dictionary {
  readonly #source: Record<string, unknown>;
  readonly #converted = new Map<string, data.ExpressionData>();
  #keysByLowerCase: Map<string, string> | undefined;

  constructor(source: Record<string, unknown>) {
    super();
    this.#source = source;
  }

  override get(key: string): data.ExpressionData | undefined {
    const name = this.#resolve(key);
    if (name === undefined) return undefined;
    let value = this.#converted.get(name);
    if (value === undefined) {
      value = toData(this.#source[name]);
      this.#converted.set(name, value);
    }
    return value;
  }

  override values(): data.ExpressionData[] {
    return Object.keys(this.#source).map((key) => this.get(key)!);
  }

  override pairs(): { key: string; value: data.ExpressionData }[] {
    return Object.keys(this.#source).map((key) => ({ key, value: this.get(key)! }));
  }

  #resolve(key: string): string | undefined {
    if (Object.hasOwn(this.#source, key)) return key;
    if (this.#keysByLowerCase === undefined) {
      this.#keysByLowerCase = new Map();
      for (const name of Object.keys(this.#source)) {
        const lower = name.toLowerCase();
        if (!this.#keysByLowerCase.has(lower)) this.#keysByLowerCase.set(lower, name);
      }
    }
    return this.#keysByLowerCase.get(key.toLowerCase());
  }
}
