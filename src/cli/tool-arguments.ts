import type { Diagnostic } from '../errors.js';
import { TYPE_PHRASES as INPUT_TYPE_PHRASES, type CliPair } from '../workflow/inputs.js';

// `runner call APP.TOOL k=v ...`: command-line text → tool arguments, typed
// by the tool's inputSchema the way a person would mean them.

type PropertySchema = { type?: string | string[]; enum?: unknown[]; anyOf?: unknown[]; oneOf?: unknown[] };

/**
 * Builds the arguments of one call. A value read from `@file.json` is used
 * as it is; text is converted by the property's type in the inputSchema:
 * `string` as written; `number`, `integer`, `boolean`, `null`, `array` and
 * `object` parsed as JSON; with several types, the first that fits (JSON
 * before text). A property the schema does not type (or does not list) gets
 * the JSON value when the text parses as JSON, else the text. Problems
 * (a name given twice, a value that fits no type) are pushed as diagnostics
 * naming the argument.
 */
export function buildToolArguments(pairs: readonly (string | CliPair)[], inputSchema: unknown, diagnostics: Diagnostic[]): Record<string, unknown> {
  const properties = (inputSchema as { properties?: Record<string, PropertySchema> } | undefined)?.properties ?? {};
  const args: Record<string, unknown> = {};
  for (const pair of pairs) {
    if (typeof pair === 'string') {
      diagnostics.push({ message: `\`${pair}\`: expected name=value`, hint: 'give each argument as name=value, or name=@file.json to read a JSON value from a file' });
      continue;
    }
    if (Object.hasOwn(args, pair.name)) {
      diagnostics.push({ message: `argument \`${pair.name}\` is given twice` });
      continue;
    }
    if ('file' in pair) {
      setArgument(args, pair.name, pair.value);
      continue;
    }
    const types = Object.hasOwn(properties, pair.name) ? typesOf(properties[pair.name]) : [];
    const value = convertText(pair.text, types);
    if (value === NO_VALUE) {
      diagnostics.push({
        message: `argument \`${pair.name}\`: expected ${types.map((type) => TYPE_PHRASES[type] ?? type).join(' or ')}, got \`${pair.text}\``,
        hint: 'numbers, booleans, arrays and objects are written as JSON, e.g. tags=\'["a","b"]\'',
      });
    } else {
      setArgument(args, pair.name, value);
    }
  }
  return args;
}

const NO_VALUE = Symbol('no value');

const TYPE_PHRASES: Record<string, string> = { ...INPUT_TYPE_PHRASES, null: 'null' };

/** Sets an own property, even one named `__proto__`, which plain assignment would not store. */
function setArgument(args: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(args, name, { value, enumerable: true, writable: true, configurable: true });
}

function convertText(text: string, types: string[]): unknown {
  const json = parseJson(text);
  if (types.length === 0) return json === NO_VALUE ? text : json;
  for (const type of types) {
    if (type !== 'string' && json !== NO_VALUE && isOfType(json, type)) return json;
  }
  return types.includes('string') ? text : NO_VALUE;
}

/** The JSON types a property accepts: its `type`, else those of its `enum` values or of its `anyOf`/`oneOf` branches. */
function typesOf(schema: PropertySchema): string[] {
  if (Array.isArray(schema.type)) return schema.type.map(String);
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.enum)) return [...new Set(schema.enum.map(jsonTypeOf))];
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) return [...new Set(branches.flatMap((branch) => typesOf((branch ?? {}) as PropertySchema)))];
  return [];
}

function isOfType(value: unknown, type: string): boolean {
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value);
  return jsonTypeOf(value) === type || (type === 'number' && typeof value === 'number');
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' ? 'number' : typeof value;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NO_VALUE;
  }
}
