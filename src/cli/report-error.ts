import type { CallError } from '../apps/call-error.js';
import { type Diagnostic, exitCodeFor, formatDiagnostic, isWarning, messageOf, RunnerError } from '../errors.js';
import { maskSecrets } from '../secrets.js';
import { safeForTerminal } from '../terminal-text.js';

/** Prints an error the way every command does, and returns the exit code for it. */
export function reportError(error: unknown, options: { stderr: (text: string) => void; debug?: boolean; secretValues?: readonly string[] }): number {
  // Messages carry what apps wrote (their errors, their stderr): what would steer a terminal is escaped.
  const mask = (text: string) => safeForTerminal(maskSecrets(text, options.secretValues ?? []));
  if (error instanceof RunnerError) {
    if (error.diagnostics.length > 0) {
      const errors = error.diagnostics.filter((diagnostic) => !isWarning(diagnostic));
      const count = errors.length;
      options.stderr(mask(`error: ${count === 1 ? 'one problem' : `${count} problems`} found; nothing was run\n`));
      for (const diagnostic of errors) options.stderr(mask(formatDiagnostic(diagnostic)) + '\n');
      reportWarnings(error.diagnostics.filter(isWarning), (text) => options.stderr(mask(text)));
    } else {
      const where = error.location ? `${error.location.file}:${error.location.line}:${error.location.col}: ` : '';
      options.stderr(mask(`error: ${where}${error.message}\n`));
      if (error.hint) options.stderr(mask(`  hint: ${error.hint}\n`));
    }
  } else if (isCallError(error)) {
    options.stderr(mask(`error: [${error.kind}] ${error.message}\n`));
  } else {
    const message = messageOf(error);
    options.stderr(mask(`error: ${message}\n`));
    if (!options.debug) options.stderr('  (run with --debug for details)\n');
  }
  if (options.debug && error instanceof Error && error.stack) options.stderr(mask(error.stack) + '\n');
  return exitCodeFor(error);
}

/** Prints warnings of the config or a workflow (they stop nothing), each as `warning: file:line:col: message`. */
export function reportWarnings(warnings: readonly Diagnostic[], stderr: (text: string) => void): void {
  for (const warning of warnings) stderr(`warning: ${formatDiagnostic(warning)}\n`);
}

/** A CallError, told by its name: importing the class would load the whole MCP SDK into every command, `runner runs` too. */
function isCallError(error: unknown): error is CallError {
  return error instanceof Error && error.name === 'CallError' && typeof (error as Partial<CallError>).kind === 'string';
}
