// Parses one ${{ }} expression (or a bare condition) with @actions/expressions, cached by text.
import { Lexer, Parser, wellKnownFunctions, ExpressionError as ActionsExpressionError, type Expr } from '@actions/expressions';
import { TokenType, type Token } from '@actions/expressions/lexer';
import type { FunctionInfo } from '@actions/expressions/funcs/info';
import { suggestClosest } from '../config/schema-diagnostics.js';
import { remember } from './bounded-cache.js';
import { messageOf } from '../errors.js';
import { cutText } from '../terminal-text.js';

/** The contexts an expression may read. */
export const CONTEXT_NAMES = ['inputs', 'env', 'run', 'workflow', 'trigger', 'steps', 'item', 'index'];
/** The functions that read the job's state, allowed only in `if:`. */
export const STATUS_FUNCTION_NAMES = ['success', 'failure', 'always', 'cancelled'];
const STATUS_FUNCTIONS: FunctionInfo[] = STATUS_FUNCTION_NAMES.map((name) => ({ name, minArgs: 0, maxArgs: 0 }));
const BUILT_IN_FUNCTION_NAMES = Object.values(wellKnownFunctions).map((f) => `${f.name}()`);
const ALL_FUNCTION_NAMES = [...BUILT_IN_FUNCTION_NAMES, ...STATUS_FUNCTION_NAMES.map((name) => `${name}()`)];

/** Conditions may call the status functions; templates may not. */
export type ParseMode = 'template' | 'condition';

/** A parsed expression, or what is wrong with it and where (an offset into its source). */
export type Parsed = { ok: true; expr: Expr } | { ok: false; message: string; hint?: string; position: number };

/** "<what is wrong> in `<expression>`; <what is allowed>". */
export function describeProblem(parsed: Parsed & { ok: false }, raw: string): string {
  const where = `${parsed.message} in \`${quotedExpression(raw)}\``;
  return parsed.hint === undefined ? where : `${where}; ${parsed.hint}`;
}

/** The most characters of an expression a message quotes: the position says where it is, so its start is enough. */
const MAX_QUOTED_CHARS = 200;

/** An expression as a message quotes it: whole, or its first MAX_QUOTED_CHARS characters and how many more there are. */
export function quotedExpression(raw: string): string {
  return cutText(raw, MAX_QUOTED_CHARS);
}

// Parsing is cached by text: a 1,000-step chain evaluates the same templates many times.
const parseCaches: Record<ParseMode, Map<string, Parsed>> = { template: new Map(), condition: new Map() };

/** Parses an expression's source (the text between `${{` and `}}`), or returns what is wrong and where. */
export function parseCached(source: string, mode: ParseMode): Parsed {
  const cache = parseCaches[mode];
  return cache.get(source) ?? remember(cache, source, parseExpression(source, mode));
}

// `steps.logo.outputs.path` or `inputs.company` (a context and property names)
// is most of what a large workflow writes, and is valid as written; the full
// parser (about 25 µs a call) made checking 10,000 steps take 300 ms.
const PLAIN_ACCESS = new RegExp(`^\\s*(${CONTEXT_NAMES.join('|')})((?:\\.[A-Za-z_][\\w-]*){0,16})\\s*$`);

/** For a plain context access, the step it reads (`steps.<id>...`) or null; undefined when the parser must judge. */
export function readPlainAccess(source: string): string | null | undefined {
  const match = PLAIN_ACCESS.exec(source);
  if (!match) return undefined;
  return match[1] === 'steps' && match[2] ? match[2].slice(1).split('.', 1)[0] : null;
}

/**
 * For a plain context access, its context, property names and the offset of
 * the context name; undefined when the parser must judge.
 */
export function readPlainPath(source: string): { context: string; path: string[]; position: number; tested: false } | undefined {
  const match = PLAIN_ACCESS.exec(source);
  if (!match) return undefined;
  const context = match[1];
  // Only whitespace comes before the context name.
  return { context, path: match[2] ? match[2].slice(1).split('.') : [], position: source.indexOf(context), tested: false };
}

function parseExpression(source: string, mode: ParseMode): Parsed {
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
function describeParseError(error: unknown, source: string, mode: ParseMode): Parsed & { ok: false } {
  const text = messageOf(error);
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
  // The offending token is private to the error; its message quotes it: "Unrecognized function: 'shout'".
  const name = /: '([^']*)'$/.exec(message)?.[1] ?? '';
  if (message.startsWith('Unrecognized named-value')) {
    hint = `${didYouMean(name, CONTEXT_NAMES, '')}contexts are ${CONTEXT_NAMES.join(', ')}`;
  } else if (message.startsWith('Unrecognized function')) {
    const known = mode === 'condition' ? ALL_FUNCTION_NAMES : BUILT_IN_FUNCTION_NAMES;
    const statusOnly = mode === 'template' && STATUS_FUNCTION_NAMES.includes(name.toLowerCase());
    hint =
      mode === 'condition'
        ? `${didYouMean(name, known, '()')}functions are ${known.join(', ')}`
        : `${statusOnly ? '' : didYouMean(name, known, '()')}functions are ${known.join(', ')} (status functions such as success() work only in if:)`;
  }
  return { ok: false, message, hint, position };
}

/** "did you mean `inputs`? " when a name is close to one of `known` (written with `suffix`), else "". */
function didYouMean(name: string, known: readonly string[], suffix: string): string {
  const closest = name ? suggestClosest(name, known.map((entry) => entry.slice(0, entry.length - suffix.length))) : undefined;
  return closest ? `did you mean \`${closest}${suffix}\`? ` : '';
}

/** The offset in `source` of a 0-based line and column, as the lexer counts them. */
export function offsetOfLineColumn(source: string, line: number, column: number): number {
  let offset = 0;
  for (let i = 0; i < line; i++) {
    const newline = source.indexOf('\n', offset);
    if (newline < 0) break;
    offset = newline + 1;
  }
  return offset + column;
}
