import { basename, resolve } from 'node:path';
import { isWarning, RunnerError, throwOnDiagnostics, type Diagnostic, type SourceLocation } from '../errors.js';
import { parseDuration, zeroTimeoutWarning } from '../config/durations.js';
import { sortByLocation } from '../config/load.js';
import { normalizeRetry } from '../config/normalize.js';
import type { RunnerConfig } from '../config/types.js';
import { describePath, diagnoseSchemaErrors, hintFor, validateAgainst } from '../config/schema-diagnostics.js';
import { locateItems, locateKeys, locatePath, locationAt, parseYamlSource, readSourceFile, type YamlPath, type YamlSource } from '../config/yaml-source.js';
import { checkBuiltinStep } from './builtin-steps.js';
import { locateArgumentProblem } from './locate-argument.js';
import type { ArgumentProblem } from '../scheduler/validate-args.js';
import { describeInputType, matchesInputType } from './inputs.js';
import { isRecord } from '../is-record.js';
import { WORKFLOW_NAMES, type LoadContext as Context } from './load-context.js';
import { locateInValue } from './locate-in-string.js';
import { normalizeSchedules, normalizeWatch } from './load-triggers.js';
import { collectReferences, linkStep, reportCycle } from './step-references.js';
import { rememberStepIndexes } from './graph.js';
import { MAX_NAME_LENGTH, RESERVED_STEP_ID, USES_PATTERN, WORKFLOW_NAME_PATTERN, type RawStep, type RawWorkflow } from './schema.js';
import type { InputSpec, Step, TemplateValue, Workflow } from './types.js';
import { BUILTIN_APP } from '../builtins/catalog.js';
import { diagnoseUnusableAppUse } from '../config/unusable-apps.js';
import { validateWorkflow } from '../config/compiled-schemas.js';
import { withYoungGenerationHeld } from '../config/young-generation.js';

const INPUT_TYPES: readonly string[] = ['string', 'number', 'integer', 'boolean', 'array', 'object'];
const WORKFLOW_NAME = new RegExp(WORKFLOW_NAME_PATTERN);
const USES = new RegExp(USES_PATTERN);

/** What loading a workflow may check against besides the config. */
export interface LoadWorkflowOptions {
  /** The environment runs will see: an `env.X` unset in it is a warning. Not given: not checked. */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Reads, validates and normalizes a workflow file; errors throw one
 * RunnerError with code `workflow`, warnings are returned in `warnings`.
 */
export async function loadWorkflow(file: string, config: RunnerConfig, options: LoadWorkflowOptions = {}): Promise<Workflow> {
  const diagnostics: Diagnostic[] = [];
  let text: string | undefined;
  try {
    text = await readSourceFile(file, file, diagnostics);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new RunnerError('not-found', `workflow file \`${file}\` ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`}`, { cause: error });
  }
  throwOnDiagnostics('workflow', diagnostics);
  return parseWorkflowText(text!, file, config, options);
}

/**
 * Validates and normalizes workflow text: schema, names, `uses` against the
 * config's apps, `needs`, every ${{ }} (syntax and what it reads), step
 * references and cycles. Linear in the size of the workflow; positions are
 * looked up only for problems.
 */
export function parseWorkflowText(text: string, file: string, config: RunnerConfig, options: LoadWorkflowOptions = {}): Workflow {
  return withYoungGenerationHeld(text.length, () => parseAndNormalize(text, file, config, options));
}

function parseAndNormalize(text: string, file: string, config: RunnerConfig, options: LoadWorkflowOptions): Workflow {
  const diagnostics: Diagnostic[] = [];
  const { source, data } = parseYamlSource(text, file, diagnostics);
  throwOnDiagnostics('workflow', diagnostics);
  const raw = (data ?? {}) as RawWorkflow;
  diagnostics.push(...diagnoseSchemaErrors(validateAgainst(validateWorkflow, raw), source, raw, WORKFLOW_NAMES));
  // Checks below run even after schema errors (on the parts that have the right
  // shape), so one pass shows every problem; they must not trust types blindly.
  const context: Context = { source, raw, config, diagnostics, inputNames: readInputNames(raw), ...(options.env && { env: options.env }) };
  const workflow: Workflow = {
    file: resolve(file),
    name: normalizeName(context),
    ...(typeof raw.description === 'string' && { description: raw.description }),
    on: { ...(isRecord(raw.on?.watch) && { watch: normalizeWatch(raw.on.watch, context) }), schedule: normalizeSchedules(context) },
    inputs: normalizeInputs(context),
    ...(raw.concurrency !== undefined && { concurrency: raw.concurrency }),
    ...(typeof raw.timeout === 'string' && { timeoutMs: readTimeout(raw.timeout, ['timeout'], context) }),
    defaults: {
      ...(typeof raw.defaults?.timeout === 'string' && { timeoutMs: readTimeout(raw.defaults.timeout, ['defaults', 'timeout'], context) }),
      ...(raw.defaults?.retry !== undefined && { retry: normalizeRetryDefensively(raw.defaults.retry) }),
    },
    steps: normalizeSteps(context),
    location: locatePath(source, []),
    warnings: [],
  };
  const sorted = sortByLocation(diagnostics);
  throwOnDiagnostics('workflow', sorted);
  workflow.warnings = sorted.filter(isWarning);
  sources.set(workflow, source);
  return workflow;
}

// The parsed source of each loaded workflow, for positions asked for later
// (`validate --online` and `run --dry-run` check arguments against the apps).
const sources = new WeakMap<Workflow, YamlSource>();

/**
 * Where something of a loaded workflow is written: a character of the string
 * at `path` (`{ value, offset }`), the key at `path` (`'key'`), or the value.
 */
export function locateInWorkflow(workflow: Workflow, path: YamlPath, at?: { value: string; offset: number } | 'key'): SourceLocation {
  const source = sources.get(workflow);
  if (!source) return workflow.location;
  if (at === undefined || at === 'key') return locatePath(source, path, at ?? 'value');
  return locateInValue(source, path, at.value, at.offset);
}

/** Where an argument problem of the step at `index` is written (see locateArgumentProblem); the step's own location when the workflow was not read from a file. */
export function locateArgumentInWorkflow(workflow: Workflow, index: number, problem: ArgumentProblem): SourceLocation {
  const source = sources.get(workflow);
  return source ? locateArgumentProblem(source, index, problem) : workflow.steps[index].location;
}

/**
 * Where a key of the step at `index` is written (`uses`, `with`), for messages
 * about it; the step's own location when it has no such key or the workflow
 * was not read from a file. Looked up when asked: 10,000 steps are loaded
 * without a location per key.
 */
export function locateStepKey(workflow: Workflow, index: number, ...keys: string[]): SourceLocation {
  const source = sources.get(workflow);
  const step = workflow.steps[index];
  if (!source) return step.location;
  const locations = locateKeys(source, ['steps', index]);
  for (const key of keys) if (Object.hasOwn(locations, key)) return locations[key];
  return step.location;
}

/** Declared input names by lower-case name (`inputs.X` resolves case-insensitively at run time). */
function readInputNames(raw: RawWorkflow): Map<string, string> {
  const names = new Map<string, string>();
  if (isRecord(raw.inputs)) for (const name of Object.keys(raw.inputs)) if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
  return names;
}

function normalizeName(context: Context): string {
  const { raw, source } = context;
  if (raw.name !== undefined) return raw.name;
  const fromFile = basename(source.file).replace(/\.ya?ml$/, '');
  if (!WORKFLOW_NAME.test(fromFile) || fromFile.length > MAX_NAME_LENGTH) {
    context.diagnostics.push({
      location: locationAt(source, 0),
      message: `the workflow has no \`name\`, and its file name \`${fromFile}\` is not a valid one`,
      hint: `add \`name:\` with up to ${MAX_NAME_LENGTH} lowercase letters, digits, \`_\` and \`-\`, starting with a letter or digit`,
    });
  }
  return fromFile;
}

function normalizeInputs(context: Context): Record<string, InputSpec> {
  if (!isRecord(context.raw.inputs)) return {};
  const entries = Object.entries(context.raw.inputs).flatMap(([name, raw]) => {
    if (!isRecord(raw)) return [];
    const type = raw.type ?? 'string';
    const hasDefault = 'default' in raw;
    if (hasDefault && INPUT_TYPES.includes(type) && !matchesInputType(raw.default, type)) {
      context.diagnostics.push({
        location: locatePath(context.source, ['inputs', name, 'default']),
        message: `\`default\` of input \`${name}\`: expected ${describeInputType(type)} (the input's type), got \`${JSON.stringify(raw.default) ?? 'nothing'}\``,
      });
    }
    const spec: InputSpec = {
      type,
      required: raw.required ?? !hasDefault,
      ...(hasDefault && { default: raw.default }),
      ...(raw.description !== undefined && { description: raw.description }),
      location: locatePath(context.source, ['inputs', name], 'key'),
    };
    return [[name, spec] as const];
  });
  // fromEntries: an input may be called `__proto__`, which plain assignment would not store.
  return Object.fromEntries(entries);
}

function normalizeSteps(context: Context): Step[] {
  const { source, raw, diagnostics } = context;
  if (!Array.isArray(raw.steps)) return [];
  // Every id first, so that each step's references are resolved as soon as the step is read: kept until
  // the last step was read, 10,000 steps' references lived long enough for the GC to copy them (about 19 ms).
  const firstIndexById = new Map<string, number>();
  raw.steps.forEach((rawStep, i) => {
    if (typeof rawStep?.id === 'string' && !firstIndexById.has(rawStep.id)) firstIndexById.set(rawStep.id, i);
  });
  const steps: Step[] = [];
  let needsLater = false;
  // Where each step is, in one look-up (one path lookup per step cost 10,000 steps about a twentieth of their load).
  const locations = locateItems(source, ['steps']);
  raw.steps.forEach((rawStep, i) => {
    const step = normalizeStep(isRecord(rawStep) ? rawStep : {}, i, context, locations[i] ?? locatePath(source, ['steps', i]));
    const references = collectReferences(isRecord(rawStep) ? rawStep : {}, i, context);
    if (typeof rawStep?.id === 'string') {
      // Any case: `Logs/` is `logs/` on macOS and Windows.
      if (rawStep.id.length === RESERVED_STEP_ID.length && rawStep.id.toLowerCase() === RESERVED_STEP_ID) {
        diagnostics.push({
          location: locatePath(source, ['steps', i, 'id']),
          message: `step id \`${rawStep.id}\` is reserved: the run folder keeps the apps' logs in \`${RESERVED_STEP_ID}/\`, where this step's files would go`,
          hint: 'choose another id',
        });
      }
      const first = firstIndexById.get(rawStep.id)!;
      if (first !== i) {
        diagnostics.push({
          location: locatePath(source, ['steps', i, 'id']),
          message: `duplicate step id \`${rawStep.id}\`; the first step with it is at line ${steps[first].location.line}`,
        });
      }
    }
    steps.push(step);
    if (linkStep(step, i, references, firstIndexById, context)) needsLater = true;
  });
  // Needs that all point back in the file cannot form a cycle.
  if (needsLater) reportCycle(steps, firstIndexById, context);
  rememberStepIndexes(steps, firstIndexById);
  return steps;
}

function normalizeStep(raw: RawStep, index: number, context: Context, location: SourceLocation): Step {
  const id = typeof raw.id === 'string' ? raw.id : '';
  const uses = typeof raw.uses === 'string' ? raw.uses : '';
  const dot = USES.test(uses) ? uses.indexOf('.') : -1;
  const app = dot > 0 ? uses.slice(0, dot) : '';
  const tool = dot > 0 ? uses.slice(dot + 1) : '';
  if (app === BUILTIN_APP) checkBuiltinStep(raw, index, tool, context);
  else if (app && context.config.unusableApps && Object.hasOwn(context.config.unusableApps, app)) {
    // An imported server that cannot be used: the error is positioned in the imported file.
    context.diagnostics.push(diagnoseUnusableAppUse(context.config.unusableApps[app], { uses, stepId: id, location: locatePath(context.source, ['steps', index, 'uses']) }));
  } else if (app && !Object.hasOwn(context.config.apps, app)) {
    const where = context.config.file ? `apps in ${context.config.file}` : 'apps (no runner.config.yaml was found)';
    context.diagnostics.push({
      location: locatePath(context.source, ['steps', index, 'uses']),
      message: `unknown app \`${app}\` in \`uses: ${uses}\`${id ? ` of step \`${id}\`` : ''}`,
      hint: hintFor(app, Object.keys(context.config.apps), where),
    });
  }
  const condition = typeof raw.if === 'boolean' ? String(raw.if) : raw.if;
  // Assigned one by one, in the order of Step's keys: spreading `cond && { key }` for each optional key made 10,000 steps about 10% slower to load.
  const step = { id, uses, app, tool, with: (isRecord(raw.with) ? raw.with : {}) as Step['with'], needs: [] } as Partial<Step> & Pick<Step, 'id'>;
  if (typeof condition === 'string') step.if = stripCondition(condition);
  if (raw.foreach !== undefined) step.foreach = raw.foreach as TemplateValue;
  if (raw.retry !== undefined) step.retry = normalizeRetryDefensively(raw.retry);
  if (typeof raw.timeout === 'string') step.timeoutMs = readTimeout(raw.timeout, ['steps', index, 'timeout'], context);
  if (typeof raw['idle-timeout'] === 'string') step.idleTimeoutMs = readTimeout(raw['idle-timeout'], ['steps', index, 'idle-timeout'], context);
  step.continueOnError = raw['continue-on-error'] === true;
  if (typeof raw['max-items'] === 'number') step.maxItems = raw['max-items'];
  if (isRecord(raw.elicit)) step.elicit = raw.elicit as Step['elicit'];
  step.location = location;
  return step as Step;
}

/**
 * A timeout's milliseconds (undefined when the text is not a duration: the
 * schema reports that). A timeout of zero is allowed but warned about: nothing
 * can finish within it, so what it bounds fails as a timeout at once.
 */
function readTimeout(text: string, path: YamlPath, context: Context): number | undefined {
  const ms = parseDuration(text);
  if (ms === 0) context.diagnostics.push(zeroTimeoutWarning(describePath(path, context.raw, WORKFLOW_NAMES), text, locatePath(context.source, path)));
  return ms;
}

/** `${{ x }}` → `x`; a bare condition stays as written. */
function stripCondition(text: string): string {
  const trimmed = text.trim();
  if (trimmed.startsWith('${{') && trimmed.endsWith('}}') && trimmed.indexOf('${{', 3) === -1) return trimmed.slice(3, -2).trim();
  return text;
}

function normalizeRetryDefensively(raw: unknown): Step['retry'] {
  return typeof raw === 'number' || isRecord(raw) ? normalizeRetry(raw) : undefined;
}
