// Parses one ${{ }} expression (or a bare condition) with @actions/expressions, cached by text.
import { Lexer, Parser, wellKnownFunctions, ExpressionError as ActionsExpressionError, type Expr } from '@actions/expressions';
import { TokenType, type Token } from '@actions/expressions/lexer';
import type { FunctionInfo } from '@actions/expressions/funcs/info';
import { remember } from './bounded-cache.js';

const CONTEXT_NAMES = ['inputs', 'env', 'run', 'workflow', 'trigger', 'steps', 'item', 'index'];
/** The functions that read the job's state, allowed only in `if:`. */
export const STATUS_FUNCTION_NAMES = ['success', 'failure', 'always', 'cancelled'];
const STATUS_FUNCTIONS: FunctionInfo[] = STATUS_FUNCTION_NAMES.map((name) => ({ name, minArgs: 0, maxArgs: 0 }));
const BUILT_IN_FUNCTION_NAMES = Object.values(wellKnownFunctions).map((f) => `${f.name}()`);

/** Conditions may call the status functions; templates may not. */
export type ParseMode = 'template' | 'condition';

/** A parsed expression, or what is wrong with it and where (an offset into its source). */
export type Parsed = { ok: true; expr: Expr } | { ok: false; message: string; hint?: string; position: number };

/** "<what is wrong> in `<expression>`; <what is allowed>". */
export function describeProblem(parsed: Parsed & { ok: false }, raw: string): string {
  const where = `${parsed.message} in \`${raw}\``;
  return parsed.hint === undefined ? where : `${where}; ${parsed.hint}`;
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
  return match[1] === 'steps' && match[2] ? match[2].slice(1).split('.', 1)[0]! : null;
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
