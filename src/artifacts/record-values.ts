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

/** mapRunValues for one step record (and its items, when it has them); the step itself when `map` changes nothing in it. */
export function mapStepValues<T extends Omit<StepRecord, 'items'> & { items?: ItemRecord[] }>(step: T, map: StringMap): T {
  const call = mapCallValues(step, map);
  const items = step.items && mapArray(step.items, (item) => mapItemValues(item, map));
  if (!call && items === step.items) return step;
  const mapped = { ...step, ...call };
  if (items) mapped.items = items;
  return mapped;
}

/** mapRunValues for one foreach item; the item itself when `map` changes nothing in it. */
export function mapItemValues(item: ItemRecord, map: StringMap): ItemRecord {
  const call = mapCallValues(item, map);
  const text = map(item.text);
  return !call && text === item.text ? item : { ...item, ...call, text };
}

/** A whole record: run fields and every step. */
export function mapRecordValues(record: RunRecord, map: StringMap): RunRecord {
  return { ...mapRunValues(record, map), steps: record.steps.map((step) => mapStepValues(step, map)) };
}

/** The call fields `map` changes, or undefined when it changes none (records are mapped on every write: most change nothing). */
function mapCallValues(call: Pick<StepRecord, 'args' | 'outputs' | 'text' | 'error' | 'history' | 'elicitations'>, map: StringMap) {
  const mapped = {
    args: mapDeep(call.args, map),
    outputs: mapDeep(call.outputs, map),
    text: mapDeep(call.text, map),
    error: mapError(call.error, map),
    history: mapArray(call.history, (attempt): AttemptRecord => {
      const error = mapError(attempt.error, map);
      return error === attempt.error ? attempt : { ...attempt, error };
    }),
    ...(call.elicitations && {
      elicitations: mapArray(call.elicitations, (asked): ElicitationRecord => {
        const message = map(asked.message);
        return message === asked.message ? asked : { ...asked, message };
      }),
    }),
  };
  const same =
    mapped.args === call.args &&
    mapped.outputs === call.outputs &&
    mapped.text === call.text &&
    mapped.error === call.error &&
    mapped.history === call.history &&
    mapped.elicitations === call.elicitations;
  return same ? undefined : mapped;
}

function mapError(error: StepErrorRecord | null, map: StringMap): StepErrorRecord | null {
  if (!error) return null;
  const message = map(error.message);
  return message === error.message ? error : { ...error, message };
}

/** `list` with `map` applied to each entry; the same array when no entry changed. */
function mapArray<T>(list: T[], map: (entry: T) => T): T[] {
  let copy: T[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const mapped = map(list[i]);
    if (mapped !== list[i]) (copy ??= list.slice())[i] = mapped;
  }
  return copy ?? list;
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
