import type { AttemptRecord, ElicitationRecord, ItemRecord, RunRecord, StepErrorRecord, StepRecord } from './run-record.js';

/** A change of one string; applied to values only. */
export type StringMap = (text: string) => string;

/**
 * Applies `map` to the values a run record carries from tools and users
 * (inputs, the triggering file's path, args, outputs, text, error and
 * elicitation messages) and to
 * nothing of the runner's own: ids, statuses, paths, kinds, times and keys
 * stay as they are, so masking a short secret (`2026`, `ed`) can never turn
 * a run id or a status into something else.
 */
export function mapRunValues<T extends Omit<RunRecord, 'steps'>>(run: T, map: StringMap): T {
  const trigger = { ...run.trigger };
  // The watched file's path is the user's (`invoices/acme-<token>.pdf`); `type`, `event`, `time`, `hash` are the runner's.
  for (const key of ['path', 'source']) if (typeof trigger[key] === 'string') trigger[key] = map(trigger[key]);
  return {
    ...run,
    trigger,
    inputs: mapDeep(run.inputs, map),
    ...(run.error && { error: { ...run.error, message: map(run.error.message) } }),
  };
}

/** mapRunValues for one step record (and its items, when it has them). */
export function mapStepValues<T extends Omit<StepRecord, 'items'> & { items?: ItemRecord[] }>(step: T, map: StringMap): T {
  const mapped = { ...step, ...mapCallValues(step, map) };
  if (step.items) mapped.items = step.items.map((item) => mapItemValues(item, map));
  return mapped;
}

/** mapRunValues for one foreach item. */
export function mapItemValues(item: ItemRecord, map: StringMap): ItemRecord {
  return { ...item, ...mapCallValues(item, map), text: map(item.text) };
}

/** A whole record: run fields and every step. */
export function mapRecordValues(record: RunRecord, map: StringMap): RunRecord {
  return { ...mapRunValues(record, map), steps: record.steps.map((step) => mapStepValues(step, map)) };
}

function mapCallValues(call: Pick<StepRecord, 'args' | 'outputs' | 'text' | 'error' | 'history' | 'elicitations'>, map: StringMap) {
  return {
    args: mapDeep(call.args, map),
    outputs: mapDeep(call.outputs, map),
    text: mapDeep(call.text, map),
    error: mapError(call.error, map),
    history: call.history.map((attempt): AttemptRecord => ({ ...attempt, error: mapError(attempt.error, map) })),
    ...(call.elicitations && { elicitations: call.elicitations.map((asked): ElicitationRecord => ({ ...asked, message: map(asked.message) })) }),
  };
}

function mapError(error: StepErrorRecord | null, map: StringMap): StepErrorRecord | null {
  return error ? { ...error, message: map(error.message) } : null;
}

/**
 * Applies `map` to every string inside a JSON-like value; keys are kept. A
 * value in which `map` changes nothing comes back as the same object (no copy:
 * this runs for every step the store records).
 */
export function mapDeep<T>(value: T, map: StringMap): T {
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return map(node);
    if (node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < node.length; i++) {
        const mapped = walk(node[i]);
        if (mapped !== node[i]) (copy ??= node.slice())[i] = mapped;
      }
      return copy ?? node;
    }
    let copy: Record<string, unknown> | undefined;
    for (const [key, child] of Object.entries(node)) {
      const mapped = walk(child);
      // defineProperty, not `=`: a key `__proto__` (JSON.parse makes it an own key) must stay a plain value.
      if (mapped !== child) Object.defineProperty((copy ??= { ...(node as Record<string, unknown>) }), key, { value: mapped, enumerable: true, writable: true, configurable: true });
    }
    return copy ?? node;
  };
  return walk(value) as T;
}
