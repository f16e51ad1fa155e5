// Messages from ajv JSON Schema errors: each error becomes a Diagnostic at the offending key or value.
import type { ErrorObject } from 'ajv';
import type { Diagnostic } from '../errors.js';
import { DURATION_PATTERN } from './durations.js';
import { locatePath, type YamlPath, type YamlSource } from './yaml-source.js';

/** The closest candidate by edit distance, when it is close enough to be a likely typo. */
export function suggestClosest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  for (const candidate of candidates) {
    const distance = candidate.toLowerCase() === word.toLowerCase() ? 0 : editDistance(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** A hint naming the allowed values, led by "did you mean" when one is close. */
export function hintFor(word: string, allowed: readonly string[], what: string): string {
  const shown = allowed.length > 12 ? `${allowed.slice(0, 12).join(', ')} and ${allowed.length - 12} more` : allowed.join(', ');
  const list = `${what}: ${shown || 'none'}`;
  const closest = suggestClosest(word, allowed);
  return closest ? `did you mean \`${closest}\`? ${list}` : list;
}

/** Renders a value for "got …" in messages: short, and never a whole mapping. */
export function renderValue(value: unknown): string {
  if (value === null || value === undefined) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- lists and mappings returned above: only scalars reach String()
  const text = String(value);
  return `\`${text.length > 60 ? `${text.slice(0, 57)}...` : text}\``;
}

/** Edits between two words, a swap of neighbouring letters counting as one (`ecoh` → `echo`). */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Infinity;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) current[j] = Math.min(current[j], before[j - 2] + 1);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length];
}

// ---- JSON Schema errors → diagnostics ------------------------------------

/** Names the things a path lands in, for messages ("step `logo`", "app `image`"). */
export interface PathNames {
  /** What the whole document is called: "the workflow", "the config". */
  root: string;
  /** A name for the thing the path starts with, and how many segments it covers. */
  owner?: (path: YamlPath, data: unknown) => { label: string; length: number } | undefined;
}

/** A validator of one of our schemas, generated at build time (compiled-schemas.ts). */
export type SchemaValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Validates data with a schema's validator; returns every error (empty when valid). */
export function validateAgainst(validate: SchemaValidator, data: unknown): ErrorObject[] {
  return validate(data) ? [] : [...(validate.errors ?? [])];
}

/** Turns ajv errors into diagnostics at the offending key or value, one per problem. */
export function diagnoseSchemaErrors(errors: ErrorObject[], source: YamlSource, data: unknown, names: PathNames): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const error of pruneBranchErrors(errors)) {
    const diagnostic = diagnoseOne(error, source, data, names);
    if (!diagnostic) continue;
    const key = `${diagnostic.location?.line}:${diagnostic.location?.col}:${diagnostic.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    diagnostics.push(diagnostic);
  }
  return diagnostics;
}

/**
 * Keeps only the errors of the `oneOf` branch the user evidently meant: the one
 * whose type matches the value (`retry: { attemps: 3 }` → the mapping branch's
 * "unknown key"). When no branch or several fit, the `oneOf` error alone stays.
 */
function pruneBranchErrors(errors: ErrorObject[]): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  const branching = errors
    .filter((error) => error.keyword === 'oneOf' || error.keyword === 'anyOf')
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const parent of branching) {
    if (dropped.has(parent)) continue;
    const prefix = `${parent.schemaPath}/`;
    const branches = new Map<string, ErrorObject[]>();
    for (const error of errors) {
      if (dropped.has(error) || !error.schemaPath.startsWith(prefix) || !isWithin(error.instancePath, parent.instancePath)) continue;
      const index = error.schemaPath.slice(prefix.length).split('/', 1)[0];
      branches.set(index, [...(branches.get(index) ?? []), error]);
    }
    const fitting = [...branches.values()].filter(
      (branch) => !branch.some((e) => e.instancePath === parent.instancePath && ['type', 'const', 'enum'].includes(e.keyword)),
    );
    const keep = fitting.length === 1 && branches.size > 1 ? fitting[0] : [];
    if (keep.length > 0) dropped.add(parent);
    for (const branch of branches.values()) for (const error of branch) if (!keep.includes(error)) dropped.add(error);
  }
  return errors.filter((error) => !dropped.has(error));
}

function isWithin(pointer: string, parent: string): boolean {
  return pointer === parent || pointer.startsWith(`${parent}/`);
}

function diagnoseOne(error: ErrorObject, source: YamlSource, data: unknown, names: PathNames): Diagnostic | undefined {
  const path = toPath(error.instancePath, data);
  const parent = (error.parentSchema ?? {}) as Record<string, unknown>;
  const value = valueAt(data, path);
  const where = describePath(path, data, names);
  if (error.keyword === 'additionalProperties') {
    const key = String(error.params.additionalProperty);
    const allowed = Object.keys((parent.properties as object | undefined) ?? {});
    return {
      location: locatePath(source, [...path, key], 'key'),
      message: `unknown key \`${key}\` in ${where}`,
      hint: hintFor(key, allowed, 'allowed keys'),
    };
  }
  if (error.keyword === 'propertyNames') return undefined; // reported through the inner error
  if (error.propertyName !== undefined) {
    const expected = (parent.errorMessage as string | undefined) ?? `a name matching ${String(parent.pattern)}`;
    return {
      location: locatePath(source, [...path, error.propertyName], 'key'),
      message: `invalid name \`${error.propertyName}\` in ${where}: expected ${expected}`,
    };
  }
  if (error.keyword === 'required') {
    return { location: locatePath(source, path, 'key'), message: `${where} is missing \`${String(error.params.missingProperty)}\`` };
  }
  const expected = expectedFor(error, parent);
  const got = error.keyword === 'oneOf' && error.params.passingSchemas ? 'both' : renderValue(value);
  const diagnostic: Diagnostic = { location: locatePath(source, path, 'value'), message: `${where}: expected ${expected}, got ${got}` };
  if (error.keyword === 'enum' && typeof value === 'string') {
    const closest = suggestClosest(value, (error.params.allowedValues as unknown[]).map(String));
    if (closest) diagnostic.hint = `did you mean \`${closest}\`?`;
  }
  if (parent.pattern === DURATION_PATTERN && typeof value === 'number') {
    diagnostic.hint = `a bare number has no unit: write \`${value}s\` or \`${value}ms\``;
  }
  return diagnostic;
}

const TYPE_PHRASES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'a mapping (key: value)',
  array: 'a list',
  null: 'nothing',
};

function expectedFor(error: ErrorObject, parent: Record<string, unknown>): string {
  const custom = parent.errorMessage as string | undefined;
  const typePhrase = TYPE_PHRASES[String(parent.type)] ?? 'a value';
  const limit = error.params.limit as number;
  switch (error.keyword) {
    case 'type':
      return custom ?? String(error.params.type).split(',').map((type) => TYPE_PHRASES[type] ?? type).join(' or ');
    case 'pattern':
      return custom ?? `text matching ${String(error.params.pattern)}`;
    case 'enum':
      return custom ?? `one of ${(error.params.allowedValues as unknown[]).map((v) => `\`${String(v)}\``).join(', ')}`;
    case 'const':
      return custom ?? `\`${String(error.params.allowedValue)}\``;
    case 'oneOf':
    case 'anyOf':
      return custom ?? 'a value of another shape';
    case 'minimum':
      return `${typePhrase} from ${limit} and up`;
    case 'exclusiveMinimum':
      return `${typePhrase} greater than ${limit}`;
    case 'maximum':
      return `${typePhrase} up to ${limit}`;
    case 'minItems':
      return limit === 1 ? 'a non-empty list' : `a list of at least ${limit} entries`;
    case 'minLength':
      return limit === 1 ? 'a non-empty string' : `a string of at least ${limit} characters`;
    case 'uniqueItems':
      return 'a list without duplicates';
    default:
      return custom ?? error.message ?? 'a valid value';
  }
}

/** A JSON pointer as path segments, with list indexes as numbers. */
function toPath(pointer: string, data: unknown): (string | number)[] {
  if (pointer === '') return [];
  const path: (string | number)[] = [];
  let current = data;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const step = Array.isArray(current) ? Number(segment) : segment;
    path.push(step);
    current = current && typeof current === 'object' ? (current as Record<string | number, unknown>)[step] : undefined;
  }
  return path;
}

function valueAt(data: unknown, path: YamlPath): unknown {
  let current = data;
  for (const segment of path) {
    if (!current || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/** "`timeout` in step `thumbs`", "app `image`", "`policy.rules[0]`", "the workflow". */
export function describePath(path: YamlPath, data: unknown, names: PathNames): string {
  const owner = names.owner?.(path, data);
  if (owner) {
    const rest = path.slice(owner.length);
    return rest.length === 0 ? owner.label : `${formatKeyPath(rest)} of ${owner.label}`;
  }
  return path.length === 0 ? names.root : formatKeyPath(path);
}

function formatKeyPath(path: YamlPath): string {
  const text = path.map((segment, i) => (typeof segment === 'number' ? `[${segment}]` : i === 0 ? segment : `.${segment}`)).join('');
  return `\`${text}\``;
}
