/** Where in a source file a problem is: 1-based line and column. */
export interface SourceLocation {
  file: string;
  line: number;
  col: number;
}

/** One problem found in a config, workflow or inputs file. */
export interface Diagnostic {
  location?: SourceLocation;
  message: string;
  /** A warning is printed and stops nothing (unless `validate --strict`). @default 'error' */
  severity?: 'error' | 'warning';
  /** What was expected, said plainly ("a duration like 500ms, 30s or 10m"). */
  expected?: string;
  hint?: string;
}

/**
 * Codes of errors the runner raises itself. The CLI maps them to exit codes in
 * one place (`exitCodeFor`); nothing else decides an exit code.
 */
export type RunnerErrorCode =
  | 'usage' // bad command line
  | 'config' // runner.config.yaml (or an imported mcpServers file) is invalid
  | 'workflow' // a workflow file is invalid
  | 'inputs' // workflow inputs are missing or of the wrong type
  | 'not-found' // a file or run that was named does not exist
  | 'app' // an app could not be started or reached (outside a step)
  | 'interrupted' // SIGINT/SIGTERM
  | 'storage' // a file or the run store could not be written (disk full, read-only, name too long)
  | 'busy' // the run is held by another live process
  | 'lock-drift' // a tool a run would call changed since runner.lock was written
  | 'waiting' // the run still waits for an approval nobody gave (exit 1, like a waiting run)
  | 'internal';

export interface RunnerErrorOptions {
  hint?: string;
  location?: SourceLocation;
  diagnostics?: Diagnostic[];
  details?: unknown;
  cause?: unknown;
}

/** An error the user can act on: a code, a message, and where and what to fix. */
export class RunnerError extends Error {
  readonly code: RunnerErrorCode;
  readonly hint?: string;
  readonly location?: SourceLocation;
  readonly diagnostics: Diagnostic[];
  readonly details?: unknown;

  constructor(code: RunnerErrorCode, message: string, options: RunnerErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RunnerError';
    this.code = code;
    this.hint = options.hint;
    this.location = options.location;
    this.diagnostics = options.diagnostics ?? [];
    this.details = options.details;
  }
}

/** Whether a diagnostic is a warning (anything else is an error). */
export function isWarning(diagnostic: Diagnostic): boolean {
  return diagnostic.severity === 'warning';
}

/** The diagnostics of a RunnerError; an error without any becomes one. */
export function diagnosticsOf(error: RunnerError): Diagnostic[] {
  return error.diagnostics.length > 0 ? error.diagnostics : [{ message: error.message, location: error.location, hint: error.hint }];
}

/**
 * Throws a RunnerError carrying every diagnostic (warnings too, so they are
 * shown beside the errors), when there is at least one error.
 */
export function throwOnDiagnostics(code: RunnerErrorCode, diagnostics: Diagnostic[]): void {
  const errors = diagnostics.filter((diagnostic) => !isWarning(diagnostic));
  if (errors.length === 0) return;
  const first = errors[0];
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  throw new RunnerError(code, `${first.message}${more}`, { diagnostics, location: first.location, hint: first.hint });
}

/** Formats a location as `file:line:col`. */
export function formatLocation(location: SourceLocation): string {
  return `${location.file}:${location.line}:${location.col}`;
}

/** Formats one diagnostic the way every command prints it. */
export function formatDiagnostic(diagnostic: Diagnostic): string {
  const where = diagnostic.location ? `${formatLocation(diagnostic.location)}: ` : '';
  let text = `${where}${diagnostic.message}`;
  if (diagnostic.expected) text += `\n  expected: ${diagnostic.expected}`;
  if (diagnostic.hint) text += `\n  hint: ${diagnostic.hint}`;
  return text;
}

/** The exit codes every command uses (documented in docs/commands.md). */
export const ExitCode = {
  succeeded: 0,
  stepFailed: 1,
  invalid: 2,
  interrupted: 130,
} as const;

/** The one mapping from error to exit code. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof RunnerError) {
    switch (error.code) {
      case 'usage':
      case 'config':
      case 'workflow':
      case 'inputs':
      case 'not-found':
      case 'busy':
      case 'lock-drift':
        return ExitCode.invalid;
      case 'interrupted':
        return ExitCode.interrupted;
      default:
        return ExitCode.stepFailed;
    }
  }
  return ExitCode.stepFailed;
}

/** The most JSON of a thrown non-Error object shown in a message. */
const MAX_THROWN_JSON = 200;

/**
 * What a thrown value says: an Error's message, else its code, else a name
 * other than `Error` (Node's AggregateError for a refused connection has only
 * those); a string as it is; an object's `message` or `code`, else its JSON,
 * cut at MAX_THROWN_JSON characters; never `[object Object]`.
 */
export function messageOf(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message || (thrown as NodeJS.ErrnoException).code || (thrown.name === 'Error' ? '' : thrown.name);
  if (typeof thrown !== 'object' || thrown === null) return String(thrown);
  const { message, code } = thrown as { message?: unknown; code?: unknown };
  if (typeof message === 'string' && message !== '') return message;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  let json: string | undefined;
  try {
    json = JSON.stringify(thrown);
  } catch {
    json = undefined; // a cycle or a BigInt
  }
  if (json === undefined || json === '{}') {
    const keys = Object.keys(thrown);
    return keys.length === 0 ? 'an empty object' : `an object with ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', ...' : ''}`;
  }
  return json.length > MAX_THROWN_JSON ? `${json.slice(0, MAX_THROWN_JSON - 3)}...` : json;
}

/** The default for an `onWarning` nobody set: a `warning:` line on the process's stderr. */
export function writeWarning(message: string): void {
  process.stderr.write(`warning: ${message}\n`);
}
