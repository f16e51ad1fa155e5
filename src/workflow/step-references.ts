// `steps.<id>` references in a workflow: implicit needs, unknown ids, reads that need to know the step, and cycles.
import type { SourceLocation } from '../errors.js';
import { describePath, hintFor } from '../config/schema-diagnostics.js';
import { locatePath, type YamlPath } from '../config/yaml-source.js';
import type { Reference } from './check-step-expressions.js';
import { findCycle } from './graph.js';
import { WORKFLOW_NAMES, type LoadContext as Context } from './load-context.js';
import { locateInValue } from './locate-in-string.js';
import type { Step } from './types.js';

export { collectReferences, type Reference } from './check-step-expressions.js';

/** Reports a cycle among the steps' needs, once every step is linked (linkStep). */
export function reportCycle(steps: Step[], firstIndexById: Map<string, number>, context: Context): void {
  const cycle = findCycle(steps);
  if (cycle) {
    // findCycle lists each step before the one it needs; show run order instead.
    const loop = (cycle[0] === cycle[cycle.length - 1] ? cycle : [...cycle, cycle[0]]).reverse();
    context.diagnostics.push({
      location: steps[firstIndexById.get(loop[0]) ?? 0].location,
      message: `steps form a cycle: ${loop.join(' → ')} (each step needs the one before it)`,
      hint: 'remove one of these needs; references to `steps.<id>` in `with`, `if`, `foreach` and `elicit` count as needs too',
    });
  }
}

const NO_NEEDS: readonly unknown[] = [];

/**
 * Sets the needs of the step at `index` from its `needs` and its references,
 * reporting unknown and self references; `firstIndexById` holds every step's
 * id. One call per step, so that V8 optimizes it early. Returns whether the
 * step needs a step written after it: only such a need can close a cycle, so
 * a workflow whose steps all need earlier ones is not searched for one.
 */
export function linkStep(step: Step, index: number, references: Reference[], firstIndexById: Map<string, number>, context: Context): boolean {
  const { source, raw } = context;
  const needs: string[] = [];
  const declared: string[] = [];
  let needsLater = false;
  const rawNeeds = raw.steps?.[index]?.needs;
  const explicit: readonly unknown[] = typeof rawNeeds === 'string' ? [rawNeeds] : Array.isArray(rawNeeds) ? rawNeeds : NO_NEEDS;
  for (let j = 0; j < explicit.length; j++) {
    const id: unknown = explicit[j];
    if (typeof id !== 'string') continue;
    if (isKnownOther(step, id, firstIndexById)) {
      needs.push(id);
      declared.push(id);
      if (firstIndexById.get(id)! > index) needsLater = true;
    } else {
      const path = typeof rawNeeds === 'string' ? ['steps', index, 'needs'] : ['steps', index, 'needs', j];
      reportBadReference(step, id, ['steps', index, 'needs'], locatePath(source, path), firstIndexById, context);
    }
  }
  for (const reference of references) {
    if (isKnownOther(step, reference.id, firstIndexById)) {
      needs.push(reference.id);
      if (firstIndexById.get(reference.id)! > index) needsLater = true;
      checkForeachRead(reference, raw.steps?.[firstIndexById.get(reference.id)!], context);
    } else reportBadReference(step, reference.id, reference.path, locateReference(reference, context), firstIndexById, context);
  }
  step.needs = sortedUnique(needs);
  step.declaredNeeds = sortedUnique(declared);
  return needsLater;
}

function isKnownOther(step: Step, id: string, firstIndexById: Map<string, number>): boolean {
  return id !== step.id && firstIndexById.has(id);
}

/** A reference to the step itself or to no step; positions and descriptions are computed only for these. */
function reportBadReference(step: Step, id: string, path: YamlPath, location: SourceLocation, firstIndexById: Map<string, number>, context: Context): void {
  const where = describePath(path, context.raw, WORKFLOW_NAMES);
  context.diagnostics.push(
    id === step.id
      ? { location, message: `${where} refers to its own step \`${id}\``, hint: 'a step cannot need itself or read its own result' }
      : { location, message: `${where} refers to step \`${id}\`, which does not exist`, hint: hintFor(id, [...firstIndexById.keys()], 'steps') },
  );
}

/**
 * A foreach step's `outputs` is a list, one entry per item:
 * `steps.fan.outputs.path` is always empty; `outputs[0].path` or
 * `outputs.*.path` is meant. A warning, not an error: the read is empty,
 * not harmful, and generated workflows (the benchmarks' among them) have it.
 */
function checkForeachRead(reference: Reference, producer: { foreach?: unknown } | undefined, context: Context): void {
  const { property, next, id } = reference;
  if (producer?.foreach === undefined || typeof next !== 'string' || property !== 'outputs') return;
  context.diagnostics.push({
    location: locateReference(reference, context),
    message: `${describePath(reference.path, context.raw, WORKFLOW_NAMES)} reads \`steps.${id}.outputs.${next}\`, but step \`${id}\` has \`foreach\`: its outputs is a list with one entry per item, so this is always empty`,
    hint: `read one item, \`steps.${id}.outputs[0].${next}\`, or every item, \`steps.${id}.outputs.*.${next}\``,
    severity: 'warning',
  });
}

function locateReference(reference: Reference, context: Context): SourceLocation {
  return locateInValue(context.source, reference.path, reference.value, reference.offset);
}

/** The ids sorted, each once (a Set per step cost more than this for the one or two ids most steps need). */
function sortedUnique(ids: string[]): string[] {
  if (ids.length < 2) return ids;
  ids.sort();
  let kept = 1;
  for (let i = 1; i < ids.length; i++) if (ids[i] !== ids[kept - 1]) ids[kept++] = ids[i];
  ids.length = kept;
  return ids;
}
