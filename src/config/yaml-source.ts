import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Diagnostic, SourceLocation } from '../errors.js';
import { DURATION_PATTERN } from './durations.js';
import { parseLaidOutYaml, YamlSyntaxError, type Layout } from './yaml-layout.js';
import { pinpointSyntaxError } from './yaml-syntax-error.js';

// YAML (and JSON) text with source positions, shared by the config and
// workflow loaders: parse once, keep where each key and value is written, and
// turn a path into the file:line:col of the key or value it names.

/** A path into a document: map keys and list indexes. */
export type YamlPath = readonly (string | number)[];

/** A parsed document that can still answer "where is this?". */
export interface YamlSource {
  /** The file as shown in messages. */
  file: string;
  /** The text as parsed (without a byte order mark). */
  text: string;
  /** The parsed data (undefined after a syntax error). */
  data: unknown;
  /** Where the document's content starts. */
  rootStart: number;
  layouts: Map<object, Layout>;
  /** Offsets where lines start, computed on first use. */
  lineStarts?: number[];
  /** The line (0-based) of the last location asked for. */
  lastLine?: number;
}

/** Where the thing at a path is written, as far as the path exists. */
interface Found {
  /** The offset of the key that holds it, when it is a mapping value. */
  keyStart?: number;
  /** The offset of the value itself (-1: a key without a value). */
  start: number;
  value: unknown;
  /** Path segments actually matched (the rest did not exist in the YAML). */
  depth: number;
}

/**
 * Parses YAML (JSON is YAML) keeping positions. Syntax errors are pushed as
 * diagnostics with line:col; `data` is undefined when there were any.
 */
export function parseYamlSource(
  text: string,
  file: string,
  diagnostics: Diagnostic[],
  options: { json?: boolean } = {},
): { source: YamlSource; data: unknown } {
  // Editors hide a byte order mark, so columns are counted without it.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const source: YamlSource = { file, text: body, data: undefined, rootStart: 0, layouts: new Map() };
  try {
    // JSON.parse keeps the last of duplicate keys; `json` matches it for imported JSON.
    const parsed = parseLaidOutYaml(body, options);
    source.data = parsed.data;
    source.rootStart = parsed.rootStart;
    source.layouts = parsed.layouts;
  } catch (error) {
    if (!(error instanceof YamlSyntaxError)) throw error;
    const { offset, message } = (!error.exact && pinpointSyntaxError(body, options)) || error;
    diagnostics.push({ location: locationAt(source, offset), message: `${options.json ? 'JSON' : 'YAML'} syntax error: ${message}` });
  }
  return { source, data: source.data };
}

/**
 * Parses JSON keeping positions (from the YAML parser; JSON is YAML). JSON.parse
 * is the judge of what is JSON and gives the data, since YAML would also accept
 * comments and trailing commas. V8 names the offset of a syntax error only in
 * its message text, so it is read from there, falling back to where YAML saw a
 * problem, then to the end of the text.
 */
export function parseJsonSource(text: string, file: string, diagnostics: Diagnostic[]): { source: YamlSource; data: unknown } {
  const problems: Diagnostic[] = [];
  const parsed = parseYamlSource(text, file, problems, { json: true });
  try {
    return { source: parsed.source, data: JSON.parse(text) as unknown };
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message);
    const location = position ? locationAt(parsed.source, Number(position[1])) : (problems[0]?.location ?? locationAt(parsed.source, text.length));
    const reason = message.replace(/ in JSON at position \d+[\s\S]*$/, '').replace(/, "[\s\S]*" is not valid JSON$/, '');
    diagnostics.push({ location, message: `JSON syntax error: ${reason}` });
    return { source: parsed.source, data: undefined };
  }
}

/** The 1-based line and column of a character offset. */
export function locationAt(source: YamlSource, offset: number): SourceLocation {
  const starts = (source.lineStarts ??= findLineStarts(source.text));
  const at = Math.max(0, offset);
  // Loaders ask in file order: try the line of the last answer and the next few before searching.
  let line = source.lastLine ?? 0;
  if (starts[line]! <= at) {
    for (let tries = 0; tries < 4 && line + 1 < starts.length && starts[line + 1]! <= at; tries++) line++;
  }
  if (starts[line]! > at || (line + 1 < starts.length && starts[line + 1]! <= at)) line = findLine(starts, at);
  source.lastLine = line;
  return { file: source.file, line: line + 1, col: at - starts[line]! + 1 };
}

/** The index of the last line start at or before `offset` (binary search). */
function findLine(starts: number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}

function findLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** Follows `path` through the data and its layouts; stops at the deepest part that exists. */
function find(source: YamlSource, path: YamlPath): Found {
  const found: Found = { start: source.rootStart, value: source.data, depth: 0 };
  for (const segment of path) {
    const { value } = found;
    const layout = typeof value === 'object' && value !== null ? source.layouts.get(value) : undefined;
    if (!layout) break;
    if (Array.isArray(value)) {
      const index = Number(segment);
      if (!Number.isInteger(index) || index < 0 || index >= layout.length) break;
      found.keyStart = undefined;
      found.start = layout[index] as number;
      found.value = value[index];
    } else {
      const entry = findEntry(layout, String(segment));
      if (entry === -1) break;
      found.keyStart = layout[entry + 1] as number;
      found.start = layout[entry + 2] as number;
      found.value = (value as Record<string, unknown>)[String(segment)];
    }
    found.depth++;
  }
  return found;
}

/** The index of `key`'s entry in a mapping layout (key, key offset, value offset); the last one, as in the data, for duplicate keys in JSON. */
function findEntry(layout: Layout, key: string): number {
  for (let i = layout.length - 3; i >= 0; i -= 3) if (layout[i] === key) return i;
  return -1;
}

/**
 * Where the thing at `path` is written. `key` points at the key that holds it;
 * `value` at a scalar value itself, and at the key for a mapping or list (the
 * value of a block mapping starts on the next line, which reads worse).
 */
export function locatePath(source: YamlSource, path: YamlPath, target: 'key' | 'value' = 'value'): SourceLocation {
  const found = find(source, path);
  const at = (offset: number) => locationAt(source, offset);
  if (found.start === -1) return at(found.keyStart!);
  if (found.depth < path.length || target === 'key') return at(found.keyStart ?? found.start);
  const isCollection = typeof found.value === 'object' && found.value !== null && source.text[found.start] !== '*';
  return at(isCollection ? (found.keyStart ?? found.start) : found.start);
}

/** Where each key of the mapping at `path` is written, by key (empty when it is not a mapping). */
export function locateKeys(source: YamlSource, path: YamlPath): Record<string, SourceLocation> {
  const locations: Record<string, SourceLocation> = {};
  const { value, depth } = find(source, path);
  const layout = depth === path.length && typeof value === 'object' && value !== null && !Array.isArray(value) ? source.layouts.get(value) : undefined;
  for (let i = 0; layout && i < layout.length; i += 3) locations[layout[i] as string] = locationAt(source, layout[i + 1] as number);
  return locations;
}

/**
 * Where a character of the string at `path` is: exact for plain and simply
 * quoted one-line strings, else the start of the string.
 */
export function locateInString(source: YamlSource, path: YamlPath, offset: number): SourceLocation {
  const { value, start, depth } = find(source, path);
  if (depth === path.length && typeof value === 'string' && start >= 0) {
    const first = source.text[start];
    const quote = first === '"' || first === "'" ? first : '';
    // Plain or quoted without escapes or folding: the text between the quotes is the value.
    const plain = !quote && first !== '|' && first !== '>' && first !== '*';
    if ((plain || quote) && source.text.startsWith(value, start + quote.length) && (!quote || source.text[start + 1 + value.length] === quote)) {
      return locationAt(source, start + quote.length + offset);
    }
  }
  return locatePath(source, path);
}

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
  const text = String(value);
  return `\`${text.length > 60 ? `${text.slice(0, 57)}...` : text}\``;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Infinity;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

// ---- JSON Schema errors → diagnostics ------------------------------------

/** Names the things a path lands in, for messages ("step `logo`", "app `image`"). */
export interface PathNames {
  /** What the whole document is called: "the workflow", "the config". */
  root: string;
  /** A name for the thing the path starts with, and how many segments it covers. */
  owner?: (path: YamlPath, data: unknown) => { label: string; length: number } | undefined;
}

let ajv: Ajv | undefined;
const validators = new WeakMap<object, ValidateFunction>();

/** Validates data against a schema; returns every error (empty when valid). */
export function validateAgainst(schema: object, data: unknown): ErrorObject[] {
  ajv ??= createAjv();
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate(data) ? [] : [...(validate.errors ?? [])];
}

function createAjv(): Ajv {
  // `errorMessage` is our annotation (also read by VS Code): what a value must look like.
  const instance = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
  instance.addKeyword('errorMessage');
  return instance;
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
      const index = error.schemaPath.slice(prefix.length).split('/', 1)[0]!;
      branches.set(index, [...(branches.get(index) ?? []), error]);
    }
    const fitting = [...branches.values()].filter(
      (branch) => !branch.some((e) => e.instancePath === parent.instancePath && ['type', 'const', 'enum'].includes(e.keyword)),
    );
    const keep = fitting.length === 1 && branches.size > 1 ? fitting[0]! : [];
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
