import type { Diagnostic, SourceLocation } from '../errors.js';
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
