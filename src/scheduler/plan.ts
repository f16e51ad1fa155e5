import type { Tool } from '@modelcontextprotocol/client';
import type { AppRegistry } from '../apps/registry.js';
import { CallError } from '../apps/call-failure.js';
import { BUILTIN_APP, BUILTIN_TOOLS } from '../builtins/catalog.js';
import { hintFor } from '../config/schema-diagnostics.js';
import type { PolicyAction, RunnerConfig } from '../config/types.js';
import { formatLocation, type Diagnostic, type SourceLocation } from '../errors.js';
import { renderAccess } from '../workflow/expression-checks.js';
import { planLevels } from '../workflow/graph.js';
import { locateArgumentInWorkflow, locateInWorkflow } from '../workflow/load.js';
import { collectStepReads, inferValueType, type TypeSources } from '../workflow/step-reads.js';
import type { Step, Workflow } from '../workflow/types.js';
import type { PolicyOverrides } from './events.js';
import { decidePolicy, readToolHints, resolveAsk, type ToolHints } from './policy.js';
import { mergeRetry } from './retry.js';
import { describeType, followOutputSchema, mismatchedArgumentType, schemaType } from './type-flow.js';
import { diagnoseLiteralArguments } from './validate-args.js';

export interface PlannedStep {
  id: string;
  uses: string;
  level: number;
  needs: string[];
  foreach: boolean;
  hints: ToolHints | null;
  policy: { action: PolicyAction; reason: string } | null;
  retry: { attempts: number; safe: boolean; why: string };
  /** Why the step could not be planned (app down, no such tool, bad arguments, types that do not fit), each with its position. */
  problems: string[];
  /** The same problems as diagnostics: where in the workflow each applies, and a hint. */
  diagnostics: Diagnostic[];
}

export interface RunPlan {
  workflow: string;
  levels: string[][];
  steps: PlannedStep[];
  apps: Record<string, { protocolVersion: string | undefined; server: { name: string; version: string } | undefined; error?: string }>;
}

const BUILTIN_CATALOG = new Map(BUILTIN_TOOLS.map((tool) => [tool.name, tool]));

/**
 * The dry-run plan: order, parallel groups, and for each step the policy
 * decision and whether a retry would be safe. Connects to the apps and reads
 * their tools; calls none. Checks each step's arguments against its tool's
 * inputSchema, and the types flowing between steps against the tools' schemas.
 */
export async function planRun(
  workflow: Workflow,
  config: RunnerConfig,
  apps: AppRegistry,
  policy: PolicyOverrides,
  options: { /** A real run would prompt for `ask` calls (stdin and stderr are a TTY). */ interactive?: boolean } = {},
): Promise<RunPlan> {
  const levels = planLevels(workflow.steps);
  const levelOf = new Map<string, number>();
  levels.forEach((ids, level) => ids.forEach((id) => levelOf.set(id, level)));
  // The runner's own tools need no connection.
  const appNames = [...new Set(workflow.steps.map((step) => step.app))].filter((name) => name !== BUILTIN_APP);
  const tools = new Map<string, Map<string, Tool> | Error>([[BUILTIN_APP, BUILTIN_CATALOG]]);
  await Promise.all(
    appNames.map(async (name) => {
      try {
        const connection = await apps.get(name);
        tools.set(name, new Map((await connection.listTools()).map((tool) => [tool.name, tool])));
      } catch (error) {
        tools.set(name, error instanceof Error ? error : new Error(String(error)));
      }
    }),
  );
  const toolOf = (step: Step): Tool | undefined => {
    const catalog = tools.get(step.app);
    return catalog instanceof Map ? catalog.get(step.tool) : undefined;
  };
  const retryBase = mergeRetry(config.retry, workflow.defaults.retry);
  const steps = workflow.steps.map((step, index): PlannedStep => {
    const retry = mergeRetry(retryBase, step.retry);
    const planned: PlannedStep = {
      id: step.id,
      uses: step.uses,
      level: levelOf.get(step.id) ?? 0,
      needs: step.needs,
      foreach: step.foreach !== undefined,
      hints: null,
      policy: null,
      retry: { attempts: retry.attempts, safe: false, why: '' },
      problems: [],
      diagnostics: [],
    };
    const usesAt = () => locateInWorkflow(workflow, ['steps', index, 'uses']);
    const catalog = tools.get(step.app);
    if (catalog instanceof Error) {
      addProblem(planned, usesAt(), catalog.message);
      return planned;
    }
    const tool = catalog?.get(step.tool);
    if (!tool) {
      const names = [...(catalog?.keys() ?? [])];
      const message = new CallError('unavailable', `app \`${step.app}\` has no tool \`${step.tool}\``).message;
      addProblem(planned, usesAt(), message, hintFor(step.tool, names, 'tools'));
      return planned;
    }
    const hints = readToolHints(tool);
    planned.hints = hints;
    if (step.app === BUILTIN_APP) {
      planned.policy = { action: 'allow', reason: 'built-in' };
    } else {
      const decision = decidePolicy(step.uses, hints, config.policy);
      const resolved = resolveAsk(step.uses, decision, { yes: policy.yes, allow: policy.allow, interactive: Boolean(options.interactive), headless: config.policy.headlessAsk });
      planned.policy = resolved === 'prompt' ? { action: 'ask', reason: `${decision.reason}; will prompt` } : resolved;
    }
    planned.retry = describeRetrySafety(hints, retry.unsafe, retry.attempts);
    return planned;
  });
  const sources: TypeSources = {
    inputs: workflow.inputs,
    steps: new Map(workflow.steps.map((step) => [step.id, step])),
    outputType: (producer, path) => {
      const tool = toolOf(producer);
      const fields = producer.foreach === undefined ? path : typeof path[0] === 'string' ? undefined : path.slice(1);
      return tool?.outputSchema && fields ? schemaType(followOutputSchema(tool.outputSchema, fields).schema) : undefined;
    },
  };
  workflow.steps.forEach((step, index) => {
    const tool = toolOf(step);
    if (!tool) return;
    const planned = steps[index];
    for (const problem of diagnoseLiteralArguments(tool, step.with)) {
      addProblem(planned, locateArgumentInWorkflow(workflow, index, problem), problem.message, problem.hint);
    }
    checkArgumentTypes(workflow, step, index, tool, sources, planned);
    checkOutputReads(workflow, step, index, sources, toolOf, planned);
  });
  const appsInfo: RunPlan['apps'] = {};
  for (const name of appNames) {
    const info = apps.infos.get(name);
    const catalog = tools.get(name);
    appsInfo[name] = {
      protocolVersion: info?.protocolVersion,
      server: info?.server,
      ...(catalog instanceof Error ? { error: catalog.message } : {}),
    };
  }
  return { workflow: workflow.name, levels, steps, apps: appsInfo };
}

/** A whole-value ${{ }} whose type is known must fit the argument's type in the inputSchema. */
function checkArgumentTypes(workflow: Workflow, step: Step, index: number, tool: Tool, sources: TypeSources, planned: PlannedStep): void {
  for (const [name, value] of Object.entries(step.with)) {
    if (typeof value !== 'string' || !value.includes('${{')) continue; // literal values are checked by the schema itself
    const type = inferValueType(value, sources);
    const expected = type && mismatchedArgumentType(tool, name, type);
    if (!expected) continue;
    const at = locateInWorkflow(workflow, ['steps', index, 'with', name], { value, offset: value.indexOf('${{') });
    const whole = value.trim().startsWith('${{') && value.trim().endsWith('}}') && value.indexOf('${{', 3) === -1;
    addProblem(
      planned,
      at,
      `\`with.${name}\` is ${describeType(type)} (\`${value.trim()}\`), but the inputSchema of ${step.uses} wants ${expected.map(describeType).join(' or ')} there`,
      whole ? undefined : 'text around ${{ }} makes the value a string; write the value as one ${{ }} to keep its type',
    );
  }
}

/** `steps.X.outputs.<field>` must be a field of X's outputSchema, where X's tool has one. */
function checkOutputReads(
  workflow: Workflow,
  step: Step,
  index: number,
  sources: TypeSources,
  toolOf: (step: Step) => Tool | undefined,
  planned: PlannedStep,
): void {
  for (const read of collectStepReads(step, index)) {
    const [id, property] = read.access.path;
    if (typeof id !== 'string' || typeof property !== 'string' || property.toLowerCase() !== 'outputs') continue;
    const producer = sources.steps.get(id);
    const outputSchema = producer && toolOf(producer)?.outputSchema;
    if (!producer || !outputSchema) continue;
    const skip = producer.foreach === undefined ? 2 : 3; // a foreach step's outputs is a list: skip its index
    if (skip === 3 && typeof read.access.path[2] === 'string') continue; // reported when the workflow was loaded
    const { missing } = followOutputSchema(outputSchema, read.access.path.slice(skip));
    if (!missing) continue;
    const shown = renderAccess(read.access, skip + missing.index + 1);
    addProblem(
      planned,
      locateInWorkflow(workflow, read.path, { value: read.value, offset: read.offset }),
      `\`${shown}\`: the outputSchema of ${producer.uses} (step \`${id}\`) has no field \`${missing.field}\``,
      hintFor(missing.field, missing.fields, 'its fields'),
    );
  }
}

function addProblem(planned: PlannedStep, location: SourceLocation, message: string, hint?: string): void {
  planned.problems.push(`${formatLocation(location)}: ${message}${hint ? ` (${hint})` : ''}`);
  planned.diagnostics.push({ location, message: `step \`${planned.id}\`: ${message}`, ...(hint && { hint }) });
}

function describeRetrySafety(hints: ToolHints, unsafe: boolean, attempts: number): PlannedStep['retry'] {
  if (hints.readOnly) return { attempts, safe: true, why: 'read-only' };
  if (hints.idempotent) return { attempts, safe: true, why: 'idempotent' };
  if (unsafe) return { attempts, safe: true, why: 'retry.unsafe: true' };
  return { attempts, safe: false, why: 'not idempotent: retried only when the request never reached the app' };
}
