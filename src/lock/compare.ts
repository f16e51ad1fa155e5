import { readToolHints, type ToolHints } from '../scheduler/policy.js';
import { canonicalJson } from './pin.js';
import { SEVERITY_ORDER, type Drift, type LockedApp, type LockedTool, type LockFile, type UsedTools } from './types.js';

type ToolDrift = Omit<Drift, 'app' | 'tool'>;

/**
 * The differences between the lock and the apps as they are now, for the
 * tools in `used` only, sorted worst first (then by app and tool). An app
 * missing from `current` (it could not be reached) is not compared: the steps
 * that need it fail on their own.
 */
export function compareWithLock(lock: LockFile, current: LockFile, used: UsedTools): Drift[] {
  const drifts: Drift[] = [];
  for (const app of [...used.keys()].sort()) {
    const live = current.apps[app];
    if (!live) continue;
    const locked = lock.apps[app];
    if (locked) drifts.push(...compareApps(app, locked, live));
    for (const tool of [...used.get(app)!].sort()) {
      for (const drift of compareTool(locked?.tools[tool], live.tools[tool])) drifts.push({ app, tool, ...drift });
    }
  }
  return sortDrifts(drifts);
}

/** Sorts drifts worst first, keeping the order of equally bad ones. */
export function sortDrifts(drifts: Drift[]): Drift[] {
  return drifts
    .map((drift, index) => ({ drift, index }))
    .sort((a, b) => SEVERITY_ORDER.indexOf(a.drift.severity) - SEVERITY_ORDER.indexOf(b.drift.severity) || a.index - b.index)
    .map(({ drift }) => drift);
}

/** A server that now says it is another program stops the run; a new version or protocol version is only reported. */
function compareApps(app: string, locked: LockedApp, live: LockedApp): Drift[] {
  const drifts: Drift[] = [];
  const [before, after] = [locked.server, live.server];
  if ((before?.name ?? null) !== (after?.name ?? null)) {
    drifts.push({ app, severity: 'breaking', change: 'the server is another program', before: before?.name ?? null, after: after?.name ?? null, stops: true });
  } else if ((before?.version ?? null) !== (after?.version ?? null)) {
    drifts.push({ app, severity: 'info', change: 'server version changed', before: before?.version ?? null, after: after?.version ?? null, stops: false });
  }
  if (locked.protocolVersion !== live.protocolVersion) {
    drifts.push({ app, severity: 'info', change: 'protocol version changed', before: locked.protocolVersion, after: live.protocolVersion, stops: false });
  }
  return drifts;
}

/** What changed in one tool, or nothing when its hash is the same. */
export function compareTool(locked: LockedTool | undefined, live: LockedTool | undefined): ToolDrift[] {
  if (!locked && !live) return [];
  if (!locked) return [{ severity: 'breaking', change: 'not in the lock (a step calls it, but it was never locked)', stops: true }];
  if (!live) return [{ severity: 'breaking', change: 'no longer listed by the app', stops: true }];
  if (locked.hash === live.hash) return [];
  if (locked.oversize || live.oversize) {
    return [{ severity: 'schema', change: 'its definition changed (too large for the lock to keep, so only its hash is compared)', before: locked.hash, after: live.hash, stops: true }];
  }
  const drifts = [
    ...compareAnnotations(locked.annotations, live.annotations),
    ...compareText('title', locked.title, live.title),
    ...compareText('description', locked.description, live.description),
    ...compareInputSchema(asObject(locked.inputSchema), asObject(live.inputSchema)),
    ...compareWhole('output schema', locked.outputSchema, live.outputSchema),
  ];
  // A hash that differs while every field is equal: the lock was edited by hand.
  if (drifts.length === 0) drifts.push({ severity: 'schema', change: 'its hash differs from the lock', before: locked.hash, after: live.hash, stops: true });
  return drifts;
}

const HINTS: { key: keyof ToolHints; annotation: string; safe: boolean }[] = [
  { key: 'readOnly', annotation: 'readOnlyHint', safe: true },
  { key: 'destructive', annotation: 'destructiveHint', safe: false },
  { key: 'idempotent', annotation: 'idempotentHint', safe: true },
  { key: 'openWorld', annotation: 'openWorldHint', safe: false },
];

/**
 * Annotation changes, judged by what they mean with the spec's defaults
 * (absent destructiveHint means destructive, absent openWorldHint means open
 * world): less safe is the worst drift there is. A change toward safe stops
 * the run too, since the policy would now allow more without a review.
 */
function compareAnnotations(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): ToolDrift[] {
  const drifts: ToolDrift[] = [];
  const was = readToolHints({ annotations: before });
  const now = readToolHints({ annotations: after });
  const explained = new Set<string>();
  // destructiveHint and idempotentHint mean something only without readOnlyHint: when only the latter changed, its line says what follows.
  const follows = HINTS.filter(({ key, annotation }) => (key === 'destructive' || key === 'idempotent') && was[key] !== now[key] && before?.[annotation] === after?.[annotation]);
  for (const { key, annotation, safe } of HINTS) {
    const [b, a] = [before?.[annotation], after?.[annotation]];
    if (was[key] === now[key] && b === a) continue;
    if (follows.some((hint) => hint.key === key)) continue;
    explained.add(annotation);
    const implied = key === 'readOnly' && follows.length > 0 ? ` (so now ${follows.map((hint) => `${now[hint.key] ? '' : 'not '}${hint.key}`).join(', ')})` : '';
    const change = `${annotation} ${showHint(b, was[key])} → ${showHint(a, now[key])}${implied}`;
    if (was[key] === now[key]) drifts.push({ severity: 'info', change: `${change} (same meaning)`, stops: true });
    else if (now[key] !== safe) drifts.push({ severity: 'less-safe', change: `less safe: ${change}`, stops: true });
    else drifts.push({ severity: 'info', change: `safer: ${change} (the policy may now allow it without asking)`, stops: true });
  }
  const rest = (annotations: Record<string, unknown> | undefined) =>
    Object.fromEntries(Object.entries(annotations ?? {}).filter(([key]) => !explained.has(key)));
  drifts.push(...compareWhole('annotations', rest(before), rest(after), 'description'));
  return drifts;
}

function showHint(value: unknown, meaning: boolean): string {
  return value === undefined ? `absent (${meaning})` : JSON.stringify(value);
}

function compareText(field: string, before: string | undefined, after: string | undefined): ToolDrift[] {
  if (before === after) return [];
  return [{ severity: 'description', change: `${field} changed`, before: before ?? null, after: after ?? null, stops: true }];
}

type JsonObject = Record<string, unknown>;

/**
 * Input schema changes, argument by argument: a new required argument (or
 * one that became required, or was removed) breaks existing calls; a new
 * optional argument or a changed one does not, by itself.
 */
function compareInputSchema(before: JsonObject, after: JsonObject): ToolDrift[] {
  // Argument names are the app's: own keys only (an argument may be called `constructor`).
  const drifts: ToolDrift[] = [];
  const [propsBefore, propsAfter] = [asObject(before.properties), asObject(after.properties)];
  const [reqBefore, reqAfter] = [requiredOf(before), requiredOf(after)];
  for (const name of [...reqAfter].filter((name) => !reqBefore.has(name)).sort()) {
    const change = Object.hasOwn(propsBefore, name) ? `argument \`${name}\` became required` : `new required argument \`${name}\``;
    drifts.push({ severity: 'breaking', change, after: propsAfter[name], stops: true });
  }
  for (const name of Object.keys(propsBefore).sort()) {
    if (!Object.hasOwn(propsAfter, name)) drifts.push({ severity: 'breaking', change: `argument \`${name}\` removed`, before: propsBefore[name], stops: true });
  }
  for (const name of Object.keys(propsAfter).sort()) {
    if (!Object.hasOwn(propsBefore, name) && !reqAfter.has(name)) {
      drifts.push({ severity: 'schema', change: `new optional argument \`${name}\``, after: propsAfter[name], stops: true });
    } else if (Object.hasOwn(propsBefore, name)) {
      drifts.push(...compareWhole(`argument \`${name}\``, propsBefore[name], propsAfter[name]));
      if (reqBefore.has(name) && !reqAfter.has(name)) drifts.push({ severity: 'schema', change: `argument \`${name}\` is no longer required`, stops: true });
    }
  }
  const rest = (schema: JsonObject) => ({ ...schema, properties: undefined, required: undefined });
  drifts.push(...compareWhole('input schema', rest(before), rest(after)));
  return drifts;
}

function compareWhole(what: string, before: unknown, after: unknown, severity: Drift['severity'] = 'schema'): ToolDrift[] {
  if (canonicalJson(before ?? null) === canonicalJson(after ?? null)) return [];
  return [{ severity, change: `${what} changed`, before: before ?? null, after: after ?? null, stops: true }];
}

function requiredOf(schema: JsonObject): Set<string> {
  return new Set(Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : []);
}

function asObject(value: unknown): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : {};
}
