// What one parsed expression reads: each context access with the property
// names it goes through, and comparisons of a step's status with a string.
// The raw material of the static checks; found by walking the AST of
// @actions/expressions, never by matching text.
import { data, type Expr } from '@actions/expressions';
import { Binary, ContextAccess, FunctionCall, Grouping, IndexAccess, Literal, Logical, Star, Unary } from '@actions/expressions/ast';
import type { Token } from '@actions/expressions/lexer';
import { offsetOfLineColumn, readPlainPath } from './expression-parser.js';

/** A property name or literal index; null for a computed index or `*`. */
export type Segment = string | number | null;

/** One read of a context: `steps.a.outputs.x` is { context: 'steps', path: ['a', 'outputs', 'x'] }. */
export interface Access {
  /** The context name, lower-case (context names are case-insensitive). */
  context: string;
  path: Segment[];
  /** Offset of the context name in the expression's source. */
  position: number;
  /** Read as a test (an operand of `||`, `&&`, `!` or a comparison), where an empty value is expected. */
  tested: boolean;
}

/** `steps.<id>.status == '<value>'` (or `!=`): a status compared with a string. */
export interface StatusComparison {
  access: Access;
  operator: '==' | '!=';
  value: string;
}

/** Everything one expression reads. */
export interface ExpressionFacts {
  readonly accesses: readonly Access[];
  readonly statusComparisons: readonly StatusComparison[];
}

/** Facts being collected. */
interface Collected {
  accesses: Access[];
  statusComparisons: StatusComparison[];
}

const factsCache = new WeakMap<Expr, ExpressionFacts>();
const NO_COMPARISONS: readonly StatusComparison[] = [];

/** The facts of a parsed expression (cached with the parse: same source, same tree). */
export function readFacts(expr: Expr, source: string): ExpressionFacts {
  let facts = factsCache.get(expr);
  if (facts === undefined) {
    const collected: Collected = { accesses: [], statusComparisons: [] };
    walk(expr, false, source, collected);
    factsCache.set(expr, (facts = collected));
  }
  return facts;
}

/** The facts of a plain `context.a.b` access without parsing it; undefined when the parser must judge. */
export function readPlainFacts(source: string): ExpressionFacts | undefined {
  const access = readPlainPath(source);
  return access === undefined ? undefined : { accesses: [access], statusComparisons: NO_COMPARISONS };
}

const PLAIN_STRING = /^\s*'([^'\r\n]*)'\s*$/;

/**
 * The facts of `context.a.b == 'text'` (or `!=`) without parsing it, the
 * usual condition (`steps.build.status == 'failed'`); undefined when the parser
 * must judge. What the parser would find: the access, tested, and the status
 * comparison when it compares `steps.<id>.status`.
 */
export function readPlainComparisonFacts(source: string): ExpressionFacts | undefined {
  const at = source.indexOf('=');
  if (at < 1 || (source[at + 1] !== '=' && source[at - 1] !== '!')) return undefined;
  const operator = source[at - 1] === '!' ? '!=' : '==';
  const left = source.slice(0, operator === '!=' ? at - 1 : at);
  const literal = PLAIN_STRING.exec(source.slice(operator === '!=' ? at + 1 : at + 2));
  const access = literal ? readPlainPath(left) : undefined;
  if (!literal || !access) return undefined;
  const tested: Access = { ...access, tested: true };
  const [, property] = tested.path;
  const isStatus = tested.context === 'steps' && tested.path.length === 2 && typeof property === 'string' && property.toLowerCase() === 'status';
  return { accesses: [tested], statusComparisons: isStatus ? [{ access: tested, operator, value: literal[1] }] : NO_COMPARISONS };
}

/** The access a chain like `steps.a.outputs[0]` is, when it starts at a context; undefined for anything else. */
export function readAccessChain(node: Expr, source: string): Access | undefined {
  if (!(node instanceof IndexAccess || node instanceof ContextAccess)) return undefined;
  return readChain(node, false, source, { accesses: [], statusComparisons: [] });
}

function walk(node: Expr, tested: boolean, source: string, facts: Collected): void {
  if (node instanceof IndexAccess || node instanceof ContextAccess) {
    readChain(node, tested, source, facts);
  } else if (node instanceof Binary) {
    noteStatusComparison(node, source, facts);
    walk(node.left, true, source, facts);
    walk(node.right, true, source, facts);
  } else if (node instanceof Logical) {
    for (const arg of node.args) walk(arg, true, source, facts);
  } else if (node instanceof Unary) {
    walk(node.expr, true, source, facts);
  } else if (node instanceof FunctionCall) {
    for (const arg of node.args) walk(arg, tested, source, facts);
  } else if (node instanceof Grouping) {
    walk(node.group, tested, source, facts);
  }
}

/** `a.b['c'][0]`: one access when it starts at a context; computed indexes are walked on their own. */
function readChain(node: IndexAccess | ContextAccess, tested: boolean, source: string, facts: Collected): Access | undefined {
  const indexes: Expr[] = [];
  let current: Expr = node;
  while (current instanceof IndexAccess) {
    indexes.push(current.index);
    current = current.expr;
  }
  indexes.reverse();
  let access: Access | undefined;
  if (current instanceof ContextAccess) {
    access = { context: current.name.lexeme.toLowerCase(), path: indexes.map(segmentOf), position: offsetOf(current.name, source), tested };
    facts.accesses.push(access);
  } else {
    walk(current, tested, source, facts); // fromJSON(x).a, (a || b).c
  }
  for (const index of indexes) if (!(index instanceof Literal) && !(index instanceof Star)) walk(index, false, source, facts);
  return access;
}

function segmentOf(index: Expr): Segment {
  if (!(index instanceof Literal)) return null;
  if (index.literal.kind === data.Kind.String) return index.literal.value;
  if (index.literal.kind === data.Kind.Number) return index.literal.value;
  return null;
}

function noteStatusComparison(node: Binary, source: string, facts: Collected): void {
  const operator = node.operator.lexeme;
  if (operator !== '==' && operator !== '!=') return;
  for (const [side, other] of [[node.left, node.right], [node.right, node.left]] as const) {
    if (!(other instanceof Literal) || other.literal.kind !== data.Kind.String) continue;
    if (!(side instanceof IndexAccess || side instanceof ContextAccess)) continue;
    const scratch: Collected = { accesses: [], statusComparisons: [] };
    const access = readChain(side, true, source, scratch);
    if (access?.context === 'steps' && access.path.length === 2 && String(access.path[1]).toLowerCase() === 'status') {
      facts.statusComparisons.push({ access, operator, value: other.literal.value });
    }
  }
}

function offsetOf(token: Token, source: string): number {
  const { line, column } = token.range.start;
  return line === 0 ? column : offsetOfLineColumn(source, line, column);
}
