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
    const declared = new Set<string>();
    const rawNeeds = raw.steps?.[i]?.needs;
    const explicit = typeof rawNeeds === 'string' ? [rawNeeds] : Array.isArray(rawNeeds) ? rawNeeds : [];
    explicit.forEach((id, j) => {
      if (typeof id !== 'string') return;
      const locate = () => locatePath(source, typeof rawNeeds === 'string' ? ['steps', i, 'needs'] : ['steps', i, 'needs', j]);
      if (check(step, id, locate, ['steps', i, 'needs'])) {
        needs.add(id);
        declared.add(id);
      }
    });
    for (const reference of referencesByStep[i]) {
      const locate = () => locateInValue(source, reference.path, reference.value, reference.offset);
      if (!check(step, reference.id, locate, reference.path)) continue;
      needs.add(reference.id);
      checkForeachRead(reference, raw.steps?.[firstIndexById.get(reference.id)!], locate, context);
    }
    step.needs = needs.size === 0 ? [] : [...needs].sort();
    step.declaredNeeds = declared.size === 0 ? [] : [...declared].sort();
  });
  const cycle = findCycle(steps);
  if (cycle) {
    // findCycle lists each step before the one it needs; show run order instead.
    const loop = (cycle[0] === cycle[cycle.length - 1] ? cycle : [...cycle, cycle[0]]).reverse();
    diagnostics.push({
      location: steps[firstIndexById.get(loop[0]) ?? 0].location,
      message: `steps form a cycle: ${loop.join(' → ')} (each step needs the one before it)`,
      hint: 'remove one of these needs; references to `steps.<id>` in `with`, `if`, `foreach` and `elicit` count as needs too',
    });
  }
}

/**
 * A foreach step's `outputs` is a list, one entry per item:
 * `steps.fan.outputs.path` is always empty; `outputs[0].path` or
 * `outputs.*.path` is meant. A warning, not an error: the read is empty,
 * not harmful, and generated workflows (the benchmarks' among them) have it.
 */
function checkForeachRead(reference: Reference, producer: { foreach?: unknown } | undefined, locate: () => SourceLocation, context: Context): void {
  const { property, next, id } = reference;
  if (producer?.foreach === undefined || typeof next !== 'string' || property !== 'outputs') return;
  context.diagnostics.push({
    location: locate(),
    message: `${describePath(reference.path, context.raw, WORKFLOW_NAMES)} reads \`steps.${id}.outputs.${next}\`, but step \`${id}\` has \`foreach\`: its outputs is a list with one entry per item, so this is always empty`,
    hint: `read one item, \`steps.${id}.outputs[0].${next}\`, or every item, \`steps.${id}.outputs.*.${next}\``,
    severity: 'warning',
  });
}
