import { createRequire } from 'node:module';
import type { Ajv as AjvInstance, ErrorObject, ValidateFunction } from 'ajv';
import type { Tool } from '@modelcontextprotocol/client';
import { hintFor, suggestClosest } from '../config/schema-diagnostics.js';
import { isRecord } from '../is-record.js';
import { checkWithin, hasPattern } from '../apps/bounded-check.js';

// validateSchema: false — a tool's schema is the app's business; checking it against the
// meta-schema costs start-up time on every run and would only turn its typos into our errors.
// verbose: errors carry the value and the schema they are about, for messages that name both.
const options = { allErrors: true, strict: false, validateFormats: false, validateSchema: false, verbose: true } as const;
const validators = new WeakMap<object, ValidateFunction | null>();
// Arguments that a simple schema accepts are judged without ajv (see acceptsSimply); a one-step
// run then neither loads ajv (about 100 CommonJS files) nor compiles the tool's schema on its way
// to the call. Everything else, and every message, still comes from ajv, loaded on first need.
const require = createRequire(import.meta.url);
let instances: { draft07: AjvInstance; draft2020: AjvInstance } | undefined;

function ajvInstances(): { draft07: AjvInstance; draft2020: AjvInstance } {
  if (!instances) {
    const { Ajv } = require('ajv') as typeof import('ajv');
    const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
    instances = { draft07: new Ajv(options), draft2020: new Ajv2020(options) };
  }
  return instances;
}

/** One argument that breaks the inputSchema, and where it is inside the arguments. */
export interface ArgumentProblem {
  message: string;
  hint?: string;
  /** Keys and indexes from the arguments' root to the value (or, for `missing`, to the object that lacks it). */
  path: string[];
  /** `value`: the value at `path` is wrong; `key`: the key at `path` should not be there; `missing`: a key is missing there. */
  target: 'value' | 'key' | 'missing';
}

/**
 * Checks arguments against a tool's `inputSchema` before anything is sent.
 * Returns the problems as readable lines; empty when valid. A schema that does
 * not compile is not held against the call: the app validates it anyway.
 */
export function checkToolArguments(tool: Pick<Tool, 'inputSchema'>, args: unknown): string[] {
  return diagnoseToolArguments(tool, args).map((problem) => problem.message);
}

/** checkToolArguments with where each problem is and a hint (valid names on an unknown argument). */
export function diagnoseToolArguments(tool: Pick<Tool, 'inputSchema'>, args: unknown): ArgumentProblem[] {
  const schema = tool.inputSchema as object | undefined;
  if (!schema || acceptsSimply(schema, args, true)) return [];
  let validate = validators.get(schema);
  if (validate === undefined) {
    validate = compile(schema);
    validators.set(schema, validate);
  }
  if (!validate || runCheck(validate, schema, args)) return [];
  return (validate.errors ?? []).map(describeError);
}

/**
 * Whether `args` are valid. A schema with a `pattern` is checked within a time
 * limit (the app chose the regular expression; see apps/bounded-check.ts); a
 * check that runs out of time is not held against the call, like a schema
 * that does not compile: the app validates its arguments anyway.
 */
function runCheck(validate: ValidateFunction, schema: object, args: unknown): boolean {
  let bounded = patternSchemas.get(schema);
  if (bounded === undefined) patternSchemas.set(schema, (bounded = hasPattern(schema)));
  return bounded ? checkWithin(() => validate(args), () => true) : validate(args);
}

const patternSchemas = new WeakMap<object, boolean>();

function compile(schema: object): ValidateFunction | null {
  const dialect = (schema as { $schema?: unknown }).$schema;
  const { draft07, draft2020 } = ajvInstances();
  const ajv = typeof dialect === 'string' && /draft-0[4-7]/.test(dialect) ? draft07 : draft2020;
  try {
    return ajv.compile(stripDialect(schema));
  } catch {
    return null;
  }
}

// The keywords acceptsSimply understands: what tools' schemas mostly are (zod's and pydantic's
// output for flat arguments). Annotations change nothing; ajv ignores `format` (validateFormats: false).
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$comment', 'format', 'deprecated', 'readOnly', 'writeOnly']);
const CHECKED = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems']);
const NUMBER_BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems'] as const;

/**
 * True only when `value` is valid against `schema` by the rules ajv applies (options above),
 * for schemas made of the keywords in CHECKED and ANNOTATIONS alone. False means "ask ajv":
 * the value may be invalid, or the schema uses something this does not know.
 */
function acceptsSimply(schema: unknown, value: unknown, root = false): boolean {
  if (schema === true) return true;
  if (!isRecord(schema)) return false;
  for (const key in schema) if (!CHECKED.has(key) && !ANNOTATIONS.has(key) && !(root && key === '$schema')) return false;
  for (const key of NUMBER_BOUNDS) if (schema[key] !== undefined && typeof schema[key] !== 'number') return false;
  if (schema.type !== undefined && !hasType(schema.type, value)) return false;
  if (schema.enum !== undefined && !(Array.isArray(schema.enum) && schema.enum.includes(value) && isPrimitive(value))) return false;
  if (typeof value === 'number') return withinNumberBounds(schema, value);
  if (typeof value === 'string') return (schema.minLength === undefined && schema.maxLength === undefined) || withinBounds([...value].length, schema.minLength, schema.maxLength);
  if (Array.isArray(value)) {
    if (!withinBounds(value.length, schema.minItems, schema.maxItems)) return false;
    return schema.items === undefined || (!Array.isArray(schema.items) && value.every((item) => acceptsSimply(schema.items, item)));
  }
  return isRecord(value) ? acceptsObject(schema, value) : true;
}

function acceptsObject(schema: Record<string, unknown>, value: Record<string, unknown>): boolean {
  const properties = schema.properties ?? {};
  if (!isRecord(properties)) return false;
  const { required = [], additionalProperties = true } = schema;
  if (!Array.isArray(required) || typeof additionalProperties !== 'boolean') return false;
  for (const name of required) if (typeof name !== 'string' || value[name] === undefined) return false;
  // ajv reads each property through the prototype too (`toString`): only own ones are judged here.
  for (const name in properties) if (value[name] !== undefined && !Object.hasOwn(value, name)) return false;
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return false;
    if (Object.hasOwn(properties, key)) {
      if (value[key] !== undefined && !acceptsSimply(properties[key], value[key])) return false;
    } else if (!additionalProperties) return false;
  }
  return true;
}

/** ajv's type checks with strictNumbers off: NaN is a number, Infinity an integer. */
function hasType(type: unknown, value: unknown): boolean {
  const types = Array.isArray(type) ? type : [type];
  return types.some((name) => {
    switch (name) {
      case 'string':
      case 'boolean':
        return typeof value === name;
      case 'number':
        return typeof value === 'number';
      case 'integer':
        return typeof value === 'number' && !(value % 1) && !Number.isNaN(value);
      case 'null':
        return value === null;
      case 'array':
        return Array.isArray(value);
      case 'object':
        return isRecord(value);
      default:
        return false;
    }
  });
}

function withinNumberBounds(schema: Record<string, unknown>, value: number): boolean {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema as Record<string, number | undefined>;
  return !(value < minimum! || value > maximum! || value <= exclusiveMinimum! || value >= exclusiveMaximum!) && !Number.isNaN(value);
}

function withinBounds(length: number, min: unknown, max: unknown): boolean {
  return !(length < (min as number) || length > (max as number));
}

function isPrimitive(value: unknown): boolean {
  return value === null || typeof value !== 'object';
}

function stripDialect(schema: object): object {
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return rest;
}

function describeError(error: ErrorObject): ArgumentProblem {
  const path = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  const where = path.length > 0 ? `\`${path.join('.')}\`` : 'arguments';
  const parent = (error.parentSchema ?? {}) as { properties?: Record<string, unknown>; required?: string[] };
  switch (error.keyword) {
    case 'required': {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      return {
        message: `missing required argument \`${[...path, missing].join('.')}\``,
        ...(Array.isArray(parent.required) && { hint: `required: ${parent.required.join(', ')}` }),
        path,
        target: 'missing',
      };
    }
    case 'additionalProperties': {
      const name = (error.params as { additionalProperty: string }).additionalProperty;
      return {
        message: `unknown argument \`${name}\`${path.length > 0 ? ` in ${where}` : ''}`,
        hint: hintFor(name, Object.keys(parent.properties ?? {}), 'arguments'),
        path: [...path, name],
        target: 'key',
      };
    }
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
      const closest = typeof error.data === 'string' ? suggestClosest(error.data, allowed.map(String)) : undefined;
      return { message: `${where} must be one of ${JSON.stringify(allowed)}, got ${describeValue(error.data)}`, ...(closest && { hint: `did you mean \`${closest}\`?` }), path, target: 'value' };
    }
    case 'type': {
      const expected = (error.params as { type: string | string[] }).type;
      return { message: `${where} must be ${describeTypes(expected)}, got ${describeValue(error.data)}`, path, target: 'value' };
    }
    default:
      return { message: `${where} ${error.message ?? 'is invalid'}`, path, target: 'value' };
  }
}

/** A schema's `type`: "string", or "string or number" for a list. */
function describeTypes(expected: string | string[]): string {
  if (!Array.isArray(expected)) return expected;
  return expected.length <= 1 ? expected.join('') : `${expected.slice(0, -1).join(', ')} or ${expected[expected.length - 1]}`;
}

/** "a number (42)", "an object": what a value is, short. */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects returned above: only scalars reach String()
  const text = JSON.stringify(value) ?? String(value);
  const shown = text.length > 40 ? `${text.slice(0, 37)}...` : text;
  return `${typeof value === 'number' ? 'a number' : typeof value === 'boolean' ? 'a boolean' : 'a string'} (${shown})`;
}

const EXPRESSION = /\$\{\{/;

function containsExpression(value: unknown): boolean {
  if (typeof value === 'string') return EXPRESSION.test(value);
  if (Array.isArray(value)) return value.some(containsExpression);
  if (value && typeof value === 'object') return Object.values(value).some(containsExpression);
  return false;
}

/**
 * Checks a step's `with` before the run, where values that hold `${{ }}` are
 * not known yet: their keys count as present, their values are not judged.
 * Missing required arguments, unknown arguments and wrong literal values are
 * reported, each with where it is and a hint.
 */
export function diagnoseLiteralArguments(tool: Pick<Tool, 'inputSchema'>, withValue: Record<string, unknown>): ArgumentProblem[] {
  const dynamic = new Set(Object.keys(withValue).filter((key) => containsExpression(withValue[key])));
  return diagnoseToolArguments(tool, coerceToolArguments(tool, withValue)).filter((problem) => problem.target !== 'value' || !dynamic.has(problem.path[0]));
}

/**
 * The arguments with each number or boolean that sits where the inputSchema
 * wants a string (a top-level property, or a property of a nested object the
 * schema describes) replaced by its string form: `${{ item }}` over [1, 2]
 * into a `text: { type: string }` sends "1" and "2". An optional argument
 * given as null where its schema takes no null is left out, as if omitted
 * (`verbose: ~`, or an expression with no value). Returns `args` itself when
 * nothing changes; never modifies it.
 */
export function coerceToolArguments<T>(tool: Pick<Tool, 'inputSchema'>, args: T): T {
  return coerceObject(tool.inputSchema, args) as T;
}

function coerceObject(schema: unknown, value: unknown): unknown {
  if (!isRecord(value) || !isRecord(schema) || !isRecord(schema.properties)) return value;
  let result: Record<string, unknown> | undefined;
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const [key, property] of Object.entries(schema.properties)) {
    if (!Object.hasOwn(value, key) || !isRecord(property)) continue;
    const current = value[key];
    if (current === null && !required.includes(key) && !acceptsNull(property)) {
      // A required one stays, so the check names it: "`x` must be boolean, got null".
      result ??= { ...value };
      delete result[key];
      continue;
    }
    const next =
      typeof current === 'number' || typeof current === 'boolean' ? (wantsStringFor(property, current) ? String(current) : current)
      : isRecord(current) ? coerceObject(property, current)
      : current;
    if (next === current) continue;
    result ??= { ...value };
    // defineProperty: a key named `__proto__` stays a plain key.
    Object.defineProperty(result, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return result ?? value;
}

/** Whether a property's schema may take null: it names `null` among its types, or names no type at all. */
function acceptsNull(schema: Record<string, unknown>): boolean {
  if (schema.type === undefined) return true;
  return schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'));
}

/** Whether the schema takes a string, and not the number or boolean given. */
function wantsStringFor(schema: Record<string, unknown>, value: number | boolean): boolean {
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? (schema.type as unknown[]) : [];
  if (!types.includes('string')) return false;
  const own = typeof value === 'boolean' ? ['boolean'] : Number.isInteger(value) ? ['integer', 'number'] : ['number'];
  return !types.some((type) => own.includes(type as string));
}
