import { resolve } from 'node:path';
import type { Composition } from '../../composition.js';
import { diagnosticsOf, ExitCode, formatDiagnostic, isWarning, RunnerError, type Diagnostic } from '../../errors.js';
import { planRun } from '../../scheduler/plan.js';
import { loadWorkflow } from '../../workflow/load.js';
import type { Workflow } from '../../workflow/types.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { openCommandContext } from '../context.js';
import { reportWarnings } from '../report-error.js';
import { jsonForOutput } from '../../terminal-text.js';

export interface ValidateOptions extends GlobalOptions {
  /** Also connect to the apps: tool names, arguments and types against their schemas. */
  online?: boolean;
  /** Print `ValidateReport` as JSON on stdout instead of text on stderr. */
  json?: boolean;
  /** Warnings count as problems (exit 2). */
  strict?: boolean;
}

/** One diagnostic as `validate --json` prints it. */
export interface DiagnosticJson {
  file: string | null;
  line: number | null;
  column: number | null;
  severity: 'error' | 'warning';
  message: string;
  hint: string | null;
  expected?: string;
}

/** What `validate --json` prints: `ok` is false when the exit code is 2. */
export interface ValidateReport {
  ok: boolean;
  strict: boolean;
  online: boolean;
  errors: number;
  warnings: number;
  files: { file: string; ok: boolean; name: string | null; steps: number | null; errors: number; warnings: number }[];
  diagnostics: DiagnosticJson[];
}

interface FileResult {
  file: string;
  workflow?: Workflow;
  diagnostics: Diagnostic[];
}

/**
 * `runner validate WORKFLOW... [--online] [--json] [--strict]`: every problem
 * in every file; exit 2 when there is an error (or, with --strict, a warning).
 */
export async function validateCommand(files: string[], options: ValidateOptions, io: CliIO): Promise<number> {
  let context: Composition;
  try {
    // The config's warnings are printed with the rest, at the end.
    context = await openCommandContext(options, io, { warn: false });
  } catch (error) {
    // With --json, a broken config is reported like any other problem: as JSON.
    if (!options.json || !(error instanceof RunnerError)) throw error;
    return finish([], diagnosticsOf(error), options, io);
  }
  const { config } = context;
  const results: FileResult[] = [];
  for (const file of files) {
    const path = resolve(io.cwd, file);
    try {
      const workflow = await loadWorkflow(path, config, { env: io.env });
      results.push({ file: path, workflow, diagnostics: [...(workflow.warnings ?? [])] });
    } catch (error) {
      if (!(error instanceof RunnerError)) throw error;
      results.push({ file: path, diagnostics: diagnosticsOf(error) });
    }
  }
  if (options.online) await checkOnline(results, context);
  return finish(results, config.warnings, options, io);
}

/** Plans each loaded workflow against the live apps; their problems join the file's diagnostics. */
async function checkOnline(results: FileResult[], context: Composition): Promise<void> {
  const loaded = results.filter((result) => result.workflow !== undefined);
  if (loaded.length === 0) return;
  try {
    for (const result of loaded) {
      const plan = await planRun(result.workflow!, context.config, context.apps(), { yes: false, allow: [] });
      for (const step of plan.steps) result.diagnostics.push(...step.diagnostics);
    }
  } finally {
    await context.close();
  }
}

function finish(results: FileResult[], configDiagnostics: readonly Diagnostic[], options: ValidateOptions, io: CliIO): number {
  const counts = (diagnostics: readonly Diagnostic[]) => {
    const warnings = diagnostics.filter(isWarning).length;
    return { errors: diagnostics.length - warnings, warnings };
  };
  const fails = ({ errors, warnings }: { errors: number; warnings: number }) => errors > 0 || (options.strict === true && warnings > 0);
  for (const result of results) result.diagnostics.sort(byPosition);
  const total = counts([...configDiagnostics, ...results.flatMap((result) => result.diagnostics)]);
  const ok = !fails(total);

  if (options.json) {
    const report: ValidateReport = {
      ok,
      strict: options.strict === true,
      online: options.online === true,
      ...total,
      files: results.map((result) => {
        const own = counts(result.diagnostics);
        return { file: result.file, ok: !fails(own), name: result.workflow?.name ?? null, steps: result.workflow?.steps.length ?? null, ...own };
      }),
      diagnostics: [
        ...configDiagnostics.map((diagnostic) => toJson(diagnostic, null)),
        ...results.flatMap((result) => result.diagnostics.map((diagnostic) => toJson(diagnostic, result.file))),
      ],
    };
    io.stdout(jsonForOutput(report));
    return ok ? ExitCode.succeeded : ExitCode.invalid;
  }

  reportWarnings(configDiagnostics.filter(isWarning), io.stderr);
  for (const diagnostic of configDiagnostics.filter((d) => !isWarning(d))) io.stderr(formatDiagnostic(diagnostic) + '\n');
  for (const result of results) {
    for (const diagnostic of result.diagnostics) io.stderr(`${isWarning(diagnostic) ? 'warning: ' : ''}${formatDiagnostic(diagnostic)}\n`);
  }
  for (const result of results) {
    const own = counts(result.diagnostics);
    if (!result.workflow || fails(own)) continue;
    const warned = own.warnings > 0 ? `, ${own.warnings} warning${own.warnings === 1 ? '' : 's'}` : '';
    const steps = result.workflow.steps.length;
    io.stdout(`ok ${result.file} (${steps} step${steps === 1 ? '' : 's'}${warned})\n`);
  }
  if (!ok) {
    const problems = total.errors + (options.strict ? total.warnings : 0);
    const strict = options.strict && total.warnings > 0 ? ` (warnings count with --strict)` : '';
    io.stderr(`${problems} problem${problems === 1 ? '' : 's'} found${strict}\n`);
  } else if (total.warnings > 0) {
    io.stderr(`${total.warnings} warning${total.warnings === 1 ? '' : 's'}; nothing stops a run (--strict makes warnings fail)\n`);
  }
  return ok ? ExitCode.succeeded : ExitCode.invalid;
}

function byPosition(a: Diagnostic, b: Diagnostic): number {
  return (a.location?.line ?? 0) - (b.location?.line ?? 0) || (a.location?.col ?? 0) - (b.location?.col ?? 0);
}

/** A diagnostic as JSON; one without a position belongs to `file` (the workflow it came from, if any). */
function toJson(diagnostic: Diagnostic, file: string | null): DiagnosticJson {
  const { location } = diagnostic;
  return {
    file: location?.file ?? file,
    line: location?.line ?? null,
    column: location?.col ?? null,
    severity: isWarning(diagnostic) ? 'warning' : 'error',
    message: diagnostic.message,
    hint: diagnostic.hint ?? null,
    ...(diagnostic.expected !== undefined && { expected: diagnostic.expected }),
  };
}
