import { createContext, Script } from 'node:vm';

// A JSON Schema `pattern` is a regular expression the app chooses, and
// JavaScript's regular expressions backtrack: `^(a+)+$` against 30 `a`s and a
// `!` takes minutes, 40 takes days, and nothing else runs meanwhile (no
// timeout fires, Ctrl-C is not handled). An app decides both the schema of its
// results (`outputSchema`) and the results the client checks against it, so a
// hostile or careless app could stop the runner that way. Checks against a
// schema with a pattern therefore run with a time limit that stops even a
// regular expression midway (node:vm's `timeout`, about 0.1 ms per check on
// top); schemas without one, most of them, are checked as they are.

/** How long one check against a schema with a `pattern` may take. */
export const SCHEMA_CHECK_LIMIT_MS = 1_000;

/** How the message of a check stopped by its time limit begins (the MCP client quotes it in the error it throws). */
export const CHECK_STOPPED = 'checking it was stopped after';

/** Thrown by runWithin when `fn` ran out of time (and was stopped). */
export class CheckTimeLimitError extends Error {
  constructor(readonly limitMs: number) {
    super(`stopped after ${limitMs}ms`);
    this.name = 'CheckTimeLimitError';
  }
}

// Made on first use: a context costs about a millisecond to create.
let sandbox: { context: object; callRun: Script } | undefined;

/**
 * Runs `fn` (synchronous) and returns what it returns; throws
 * CheckTimeLimitError when it takes longer than `limitMs`, stopping it there.
 * Not for code that must not be stopped halfway: it leaves whatever `fn` was
 * changing as it was.
 */
export function runWithin<T>(fn: () => T, limitMs: number): T {
  sandbox ??= { context: createContext({}), callRun: new Script('run()') };
  const { context, callRun } = sandbox;
  (context as { run?: () => T }).run = fn;
  try {
    return callRun.runInContext(context, { timeout: limitMs }) as T;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new CheckTimeLimitError(limitMs);
    throw error;
  } finally {
    (context as { run?: () => T }).run = undefined;
  }
}

/**
 * `check()` within SCHEMA_CHECK_LIMIT_MS (or `limitMs`), or what `outOfTime`
 * says when it took longer and was stopped.
 */
export function checkWithin<T>(check: () => T, outOfTime: () => T, limitMs = SCHEMA_CHECK_LIMIT_MS): T {
  try {
    return runWithin(check, limitMs);
  } catch (error) {
    if (error instanceof CheckTimeLimitError) return outOfTime();
    throw error;
  }
}

/** Schemas past this many nodes are treated as having a pattern rather than walked to the end. */
const MAX_NODES_WALKED = 10_000;

/** Whether a JSON Schema has a `pattern` or `patternProperties` anywhere (true too when it is too large to tell). */
export function hasPattern(schema: unknown): boolean {
  const pending: unknown[] = [schema];
  let walked = 0;
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (++walked > MAX_NODES_WALKED) return true;
    if (Array.isArray(node)) {
      for (const item of node) pending.push(item);
      continue;
    }
    const record = node as Record<string, unknown>;
    if (typeof record.pattern === 'string' || record.patternProperties !== undefined) return true;
    for (const key in record) if (Object.hasOwn(record, key)) pending.push(record[key]);
  }
  return false;
}
