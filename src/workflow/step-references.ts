// `steps.<id>` references in a workflow: expression checks, implicit needs, unknown ids and cycles.
import type { SourceLocation } from '../errors.js';
import { describePath, hintFor } from '../config/schema-diagnostics.js';
import { locateInString, locatePath, type YamlPath } from '../config/yaml-source.js';
import { checkCondition, checkTemplateString, findConditionStepReferences, findStepReferences } from './expressions.js';
import { findCycle } from './graph.js';
import { isRecord, WORKFLOW_NAMES, type LoadContext as Context } from './load-context.js';
import type { RawStep } from './schema.js';
import type { Step } from './types.js';

/** A `steps.<id>` reference found in a string of a step, kept until every id is known. */
export interface Reference {
  id: string;
  path: (string | number)[];
  text: string;
}

/** Syntax-checks the step's expressions and collects its `steps.<id>` references. */
export function collectReferences(raw: RawStep, index: number, context: Context): Reference[] {
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
export function linkSteps(steps: Step[], referencesByStep: Reference[][], firstIndexById: Map<string, number>, context: Context): void {
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
