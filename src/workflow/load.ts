import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { RunnerError, throwOnDiagnostics, type Diagnostic, type SourceLocation } from '../errors.js';
import { parseDuration } from '../config/durations.js';
import { sortByLocation } from '../config/load.js';
import { normalizeRetry } from '../config/normalize.js';
import type { RunnerConfig } from '../config/types.js';
import { describePath, diagnoseSchemaErrors, hintFor, validateAgainst, type PathNames } from '../config/schema-diagnostics.js';
import {
  locateInString,
  locateKeys,
  locatePath,
  locationAt,
  parseYamlSource,
  type YamlPath,
  type YamlSource,
} from '../config/yaml-source.js';
import { checkCronExpression, checkTimezone, CRON_EXPECTED } from './cron-syntax.js';
import { checkCondition, checkTemplateString, findConditionStepReferences, findStepReferences } from './expressions.js';
import { findCycle } from './graph.js';
import { describeInputType, matchesInputType } from './inputs.js';
import { USES_PATTERN, WORKFLOW_NAME_PATTERN, workflowSchema, type RawInput, type RawStep, type RawWorkflow } from './schema.js';
import type { InputSpec, ScheduleTrigger, Step, TemplateValue, WatchTrigger, Workflow } from './types.js';

/** Debounce of `on.watch` when the workflow does not say. */
export const DEFAULT_DEBOUNCE_MS = 300;

const INPUT_TYPES: readonly string[] = ['string', 'number', 'integer', 'boolean', 'array', 'object'];
const WORKFLOW_NAME = new RegExp(WORKFLOW_NAME_PATTERN);
const USES = new RegExp(USES_PATTERN);

/** Names things in a workflow for messages: "step `logo`", "input `company`". */
const WORKFLOW_NAMES: PathNames = {
  root: 'the workflow',
  owner(path, data) {
    if (path.length < 2) return undefined;
    if (path[0] === 'inputs') return { label: `input \`${String(path[1])}\``, length: 2 };
    if (path[0] !== 'steps' || typeof path[1] !== 'number') return undefined;
    const id = (data as { steps?: { id?: unknown }[] } | undefined)?.steps?.[path[1]]?.id;
    return { label: typeof id === 'string' ? `step \`${id}\`` : `step #${path[1] + 1}`, length: 2 };
  },
};

/** Reads, validates and normalizes a workflow file; problems throw one RunnerError with code `workflow`. */
export async function loadWorkflow(file: string, config: RunnerConfig): Promise<Workflow> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new RunnerError('not-found', `workflow file \`${file}\` ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`}`, { cause: error });
  }
  return parseWorkflowText(text, file, config);
}

/**
 * Validates and normalizes workflow text: schema, names, `uses` against the
 * config's apps, `needs`, every ${{ }}, step references and cycles. Linear in
 * the size of the workflow; positions are looked up only for problems.
 */
export function parseWorkflowText(text: string, file: string, config: RunnerConfig): Workflow {
  const diagnostics: Diagnostic[] = [];
  const { source, data } = parseYamlSource(text, file, diagnostics);
  throwOnDiagnostics('workflow', diagnostics);
  const raw = (data ?? {}) as RawWorkflow;
  diagnostics.push(...diagnoseSchemaErrors(validateAgainst(workflowSchema, raw), source, raw, WORKFLOW_NAMES));
  // Checks below run even after schema errors (on the parts that have the right
  // shape), so one pass shows every problem; they must not trust types blindly.
  const context: Context = { source, raw, config, diagnostics };
  const workflow: Workflow = {
    file: resolve(file),
    name: normalizeName(context),
    ...(typeof raw.description === 'string' && { description: raw.description }),
    on: { ...(isRecord(raw.on?.watch) && { watch: normalizeWatch(raw.on.watch, context) }), schedule: normalizeSchedules(context) },
    inputs: normalizeInputs(context),
    ...(raw.concurrency !== undefined && { concurrency: raw.concurrency }),
    ...(typeof raw.timeout === 'string' && { timeoutMs: parseDuration(raw.timeout) }),
    defaults: {
      ...(typeof raw.defaults?.timeout === 'string' && { timeoutMs: parseDuration(raw.defaults.timeout) }),
      ...(raw.defaults?.retry !== undefined && { retry: normalizeRetryDefensively(raw.defaults.retry) }),
    },
    steps: normalizeSteps(context),
    location: locatePath(source, []),
  };
  throwOnDiagnostics('workflow', sortByLocation(diagnostics));
  return workflow;
}

interface Context {
  source: YamlSource;
  raw: RawWorkflow;
  config: RunnerConfig;
  diagnostics: Diagnostic[];
}

function normalizeName(context: Context): string {
  const { raw, source } = context;
  if (raw.name !== undefined) return raw.name;
  const fromFile = basename(source.file).replace(/\.ya?ml$/, '');
  if (!WORKFLOW_NAME.test(fromFile)) {
    context.diagnostics.push({
      location: locationAt(source, 0),
      message: `the workflow has no \`name\`, and its file name \`${fromFile}\` is not a valid one`,
      hint: 'add `name:` with lowercase letters, digits, `_` and `-`, starting with a letter or digit',
    });
  }
  return fromFile;
}

function normalizeWatch(watch: NonNullable<NonNullable<RawWorkflow['on']>['watch']>, context: Context): WatchTrigger {
  return {
    paths: watch.paths ?? [],
    events: watch.events ?? ['add'],
    debounceMs: typeof watch.debounce === 'string' ? (parseDuration(watch.debounce) ?? 0) : DEFAULT_DEBOUNCE_MS,
    ...(watch.claim !== undefined && { claim: watch.claim }),
    location: locatePath(context.source, ['on', 'watch'], 'key'),
  };
}

function normalizeSchedules(context: Context): ScheduleTrigger[] {
  const schedules = context.raw.on?.schedule;
  if (!Array.isArray(schedules)) return [];
  schedules.forEach((schedule, i) => checkSchedule(schedule, i, context));
  return schedules.flatMap((schedule, i) =>
    isRecord(schedule)
      ? [
          {
            cron: schedule.cron!,
            ...(schedule.timezone !== undefined && { timezone: schedule.timezone }),
            overlap: schedule.overlap ?? 'skip',
            catchUp: schedule['catch-up'] ?? 'one',
            location: locatePath(context.source, ['on', 'schedule', i]),
          },
        ]
      : [],
  );
}

/** A bad cron expression or time zone is a load-time error at its value, not a surprise at the first fire. */
function checkSchedule(schedule: unknown, index: number, context: Context): void {
  if (!isRecord(schedule)) return;
  const path = ['on', 'schedule', index];
  if (typeof schedule.cron === 'string') {
    const problem = checkCronExpression(schedule.cron);
    if (problem) {
      context.diagnostics.push({
        location: locatePath(context.source, [...path, 'cron']),
        message: `invalid cron expression \`${schedule.cron}\` in \`on.schedule[${index}]\`: ${problem}`,
        expected: CRON_EXPECTED,
      });
    }
  }
  if (typeof schedule.timezone === 'string') {
    const problem = checkTimezone(schedule.timezone);
    if (problem) {
      context.diagnostics.push({
        location: locatePath(context.source, [...path, 'timezone']),
        message: `invalid \`timezone\` in \`on.schedule[${index}]\`: ${problem}`,
        hint: 'use a name from the IANA time zone database, like Europe/Berlin, America/New_York or UTC',
      });
    }
  }
}

function normalizeInputs(context: Context): Record<string, InputSpec> {
  if (!isRecord(context.raw.inputs)) return {};
  const entries = Object.entries(context.raw.inputs as Record<string, RawInput>).flatMap(([name, raw]) => {
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

/** A `steps.<id>` reference found in a string of a step, kept until every id is known. */
interface Reference {
  id: string;
  path: (string | number)[];
  text: string;
}

function normalizeSteps(context: Context): Step[] {
  const { source, raw, diagnostics } = context;
  if (!Array.isArray(raw.steps)) return [];
  const steps: Step[] = [];
  const referencesByStep: Reference[][] = [];
  const firstIndexById = new Map<string, number>();
  raw.steps.forEach((rawStep, i) => {
    const step = normalizeStep(isRecord(rawStep) ? rawStep : {}, i, context);
    const references = collectReferences(isRecord(rawStep) ? rawStep : {}, i, context);
    if (typeof rawStep?.id === 'string') {
      const first = firstIndexById.get(rawStep.id);
      if (first === undefined) firstIndexById.set(rawStep.id, i);
      else {
        diagnostics.push({
          location: locatePath(source, ['steps', i, 'id']),
          message: `duplicate step id \`${rawStep.id}\`; the first step with it is at line ${steps[first]!.location.line}`,
        });
      }
    }
    steps.push(step);
    referencesByStep.push(references);
  });
  linkSteps(steps, referencesByStep, firstIndexById, context);
  return steps;
}

function normalizeStep(raw: RawStep, index: number, context: Context): Step {
  const id = typeof raw.id === 'string' ? raw.id : '';
  const uses = typeof raw.uses === 'string' ? raw.uses : '';
  const dot = USES.test(uses) ? uses.indexOf('.') : -1;
  const app = dot > 0 ? uses.slice(0, dot) : '';
  const tool = dot > 0 ? uses.slice(dot + 1) : '';
  if (app && !Object.hasOwn(context.config.apps, app)) {
    const where = context.config.file ? `apps in ${context.config.file}` : 'apps (no runner.config.yaml was found)';
    context.diagnostics.push({
      location: locatePath(context.source, ['steps', index, 'uses']),
      message: `unknown app \`${app}\` in \`uses: ${uses}\`${id ? ` of step \`${id}\`` : ''}`,
      hint: hintFor(app, Object.keys(context.config.apps), where),
    });
  }
  const condition = typeof raw.if === 'boolean' ? String(raw.if) : raw.if;
  return {
    id,
    uses,
    app,
    tool,
    with: (isRecord(raw.with) ? raw.with : {}) as Step['with'],
    needs: [],
    ...(typeof condition === 'string' && { if: stripCondition(condition) }),
    ...(raw.foreach !== undefined && { foreach: raw.foreach as TemplateValue }),
    ...(raw.retry !== undefined && { retry: normalizeRetryDefensively(raw.retry) }),
    ...(typeof raw.timeout === 'string' && { timeoutMs: parseDuration(raw.timeout) }),
    ...(typeof raw['idle-timeout'] === 'string' && { idleTimeoutMs: parseDuration(raw['idle-timeout']) }),
    continueOnError: raw['continue-on-error'] === true,
    ...(isRecord(raw.elicit) && { elicit: raw.elicit as Step['elicit'] }),
    location: locatePath(context.source, ['steps', index]),
    keyLocations: locateKeys(context.source, ['steps', index]),
  };
}

/** `${{ x }}` → `x`; a bare condition stays as written. */
function stripCondition(text: string): string {
  const trimmed = text.trim();
  if (trimmed.startsWith('${{') && trimmed.endsWith('}}') && trimmed.indexOf('${{', 3) === -1) return trimmed.slice(3, -2).trim();
  return text;
}

/** Syntax-checks the step's expressions and collects its `steps.<id>` references. */
function collectReferences(raw: RawStep, index: number, context: Context): Reference[] {
  const references: Reference[] = [];
  const path: (string | number)[] = ['steps', index];
  for (const key of ['with', 'foreach', 'elicit'] as const) {
    if (raw[key] === undefined) continue;
    path.push(key);
    scanTemplates(raw[key], path, references, context);
    path.pop();
  }
  if (typeof raw.if === 'string') {
    const ifPath = [...path, 'if'];
    for (const problem of checkCondition(raw.if)) reportExpression(problem, ifPath, context);
    for (const id of findConditionStepReferences(raw.if)) references.push({ id, path: ifPath, text: raw.if });
  }
  return references;
}

function scanTemplates(value: unknown, path: (string | number)[], references: Reference[], context: Context): void {
  if (typeof value === 'string') {
    if (!value.includes('${{')) return;
    for (const problem of checkTemplateString(value)) reportExpression(problem, path, context);
    for (const id of findStepReferences(value)) references.push({ id, path: [...path], text: value });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      scanTemplates(value[i], path, references, context);
      path.pop();
    }
  } else if (isRecord(value)) {
    for (const key of Object.keys(value)) {
      path.push(key);
      scanTemplates(value[key], path, references, context);
      path.pop();
    }
  }
}

function reportExpression(problem: { message: string; offset: number }, path: (string | number)[], context: Context): void {
  context.diagnostics.push({
    location: locateInString(context.source, path, problem.offset),
    message: `${describePath(path, context.raw, WORKFLOW_NAMES)}: ${problem.message}`,
  });
}

/** Resolves explicit and implicit needs, reporting unknown and self references, then cycles. */
function linkSteps(steps: Step[], referencesByStep: Reference[][], firstIndexById: Map<string, number>, context: Context): void {
  const { source, raw, diagnostics } = context;
  // Positions and descriptions are computed only for problems: 10,000 valid references must stay cheap.
  const check = (step: Step, id: string, locate: () => SourceLocation, path: YamlPath): boolean => {
    const problem = id === step.id ? 'self' : firstIndexById.has(id) ? undefined : 'unknown';
    if (!problem) return true;
    const where = describePath(path, raw, WORKFLOW_NAMES);
    diagnostics.push(
      problem === 'self'
        ? { location: locate(), message: `${where} refers to its own step \`${id}\``, hint: 'a step cannot need itself or read its own result' }
        : { location: locate(), message: `${where} refers to step \`${id}\`, which does not exist`, hint: hintFor(id, [...firstIndexById.keys()], 'steps') },
    );
    return false;
  };
  steps.forEach((step, i) => {
    const needs = new Set<string>();
    const rawNeeds = raw.steps?.[i]?.needs;
    const explicit = typeof rawNeeds === 'string' ? [rawNeeds] : Array.isArray(rawNeeds) ? rawNeeds : [];
    explicit.forEach((id, j) => {
      if (typeof id !== 'string') return;
      const locate = () => locatePath(source, typeof rawNeeds === 'string' ? ['steps', i, 'needs'] : ['steps', i, 'needs', j]);
      if (check(step, id, locate, ['steps', i, 'needs'])) needs.add(id);
    });
    for (const { id, path, text } of referencesByStep[i]!) {
      const locate = () => locateInString(source, path, Math.max(0, text.indexOf(`steps.${id}`)));
      if (check(step, id, locate, path)) needs.add(id);
    }
    step.needs = needs.size === 0 ? [] : [...needs].sort();
  });
  const cycle = findCycle(steps);
  if (cycle) {
    // findCycle lists each step before the one it needs; show run order instead.
    const loop = (cycle[0] === cycle[cycle.length - 1] ? cycle : [...cycle, cycle[0]!]).reverse();
    diagnostics.push({
      location: steps[firstIndexById.get(loop[0]!) ?? 0]!.location,
      message: `steps form a cycle: ${loop.join(' → ')} (each step needs the one before it)`,
      hint: 'remove one of these needs; references to `steps.<id>` in `with`, `if`, `foreach` and `elicit` count as needs too',
    });
  }
}

function normalizeRetryDefensively(raw: unknown): Step['retry'] {
  return typeof raw === 'number' || isRecord(raw) ? normalizeRetry(raw as Parameters<typeof normalizeRetry>[0]) : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
