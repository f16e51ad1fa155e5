// Steps that use the runner's own tools (`uses: runner.<tool>`): the tool
// must exist, its arguments as written must fit its inputSchema, and a
// JSONata expression written as plain text must parse.
import { createRequire } from 'node:module';
import { BUILTIN_APP, BUILTIN_TOOLS, findBuiltinTool } from '../builtins/catalog.js';
import { describePath, hintFor } from '../config/schema-diagnostics.js';
import { locatePath } from '../config/yaml-source.js';
import { isRecord } from '../is-record.js';
import { diagnoseLiteralArguments } from '../scheduler/validate-args.js';
import { locateArgumentProblem } from './locate-argument.js';
import { WORKFLOW_NAMES, type LoadContext as Context } from './load-context.js';
import { locateInValue } from './locate-in-string.js';
import type { RawStep } from './schema.js';

type Compile = (expression: string) => unknown;
interface JsonataError {
  position?: number;
  token?: unknown;
  message: string;
}

// Loaded on first use: few workflows have a transform step, and every command loads workflows.
let compileJsonata: Compile | undefined;
const loadJsonata = (): Compile => (compileJsonata ??= createRequire(import.meta.url)('jsonata') as Compile);

/**
 * Checks a `runner.<tool>` step: an unknown tool, arguments its inputSchema
 * refuses (a missing or misspelled name, a literal of the wrong type; values
 * that hold `${{ }}` are judged when the step runs) and a transform expression
 * that does not parse are errors. Apps' tools are checked the same way by
 * `validate --online` and before a run's first call, once their schemas are known;
 * the runner's own are known without connecting to anything.
 */
export function checkBuiltinStep(raw: RawStep, index: number, tool: string, context: Context): void {
  const builtin = findBuiltinTool(tool);
  if (!builtin) {
    context.diagnostics.push({
      location: locatePath(context.source, ['steps', index, 'uses']),
      message: `\`${BUILTIN_APP}\` has no built-in tool \`${tool}\` (in \`uses: ${raw.uses}\`${typeof raw.id === 'string' ? ` of step \`${raw.id}\`` : ''})`,
      hint: hintFor(tool, BUILTIN_TOOLS.map((candidate) => candidate.name), 'built-in tools'),
    });
    return;
  }
  const withValue = raw.with ?? {};
  if (isRecord(withValue)) {
    for (const problem of diagnoseLiteralArguments(builtin, withValue)) {
      context.diagnostics.push({
        location: locateArgumentProblem(context.source, index, problem),
        message: `step \`${typeof raw.id === 'string' ? raw.id : index + 1}\`: ${problem.message}`,
        ...(problem.hint && { hint: problem.hint }),
      });
    }
  }
  if (tool === 'transform') checkTransformExpression(raw, index, context);
}

/** JSONata syntax, checked before the run, positioned at the character where the parser stopped. */
function checkTransformExpression(raw: RawStep, index: number, context: Context): void {
  const expression = isRecord(raw.with) ? raw.with.expression : undefined;
  if (typeof expression !== 'string' || expression.includes('${{')) return;
  try {
    loadJsonata()(expression);
  } catch (error) {
    const { position, token, message } = error as JsonataError;
    if (typeof position !== 'number') return;
    // JSONata reports the position just after the token it stopped at.
    const length = typeof token === 'string' && expression.slice(position - token.length, position) === token ? token.length : 0;
    const offset = Math.min(Math.max(0, position - length), Math.max(0, expression.length - 1));
    const path = ['steps', index, 'with', 'expression'];
    context.diagnostics.push({
      location: locateInValue(context.source, path, expression, offset),
      message: `${describePath(path, context.raw, WORKFLOW_NAMES)}: JSONata syntax error at character ${position}: ${message}`,
      hint: 'see https://docs.jsonata.org for the syntax',
    });
  }
}
