import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Tool } from '@modelcontextprotocol/client';

// validateSchema: false — a tool's schema is the app's business; checking it against the
// meta-schema costs start-up time on every run and would only turn its typos into our errors.
const draft07 = new Ajv({ allErrors: true, strict: false, validateFormats: false, validateSchema: false });
const draft2020 = new Ajv2020({ allErrors: true, strict: false, validateFormats: false, validateSchema: false });
const validators = new WeakMap<object, ValidateFunction | null>();

/**
 * Checks arguments against a tool's `inputSchema` before anything is sent.
 * Returns the problems as readable lines; empty when valid. A schema that does
 * not compile is not held against the call: the app validates it anyway.
 */
export function checkToolArguments(tool: Pick<Tool, 'inputSchema'>, args: unknown): string[] {
  const schema = tool.inputSchema as object | undefined;
  if (!schema) return [];
  let validate = validators.get(schema);
  if (validate === undefined) {
    validate = compile(schema);
    validators.set(schema, validate);
  }
  if (!validate || validate(args)) return [];
  return (validate.errors ?? []).map(describeError);
}

function compile(schema: object): ValidateFunction | null {
  const dialect = String((schema as { $schema?: unknown }).$schema ?? '');
  const ajv = /draft-0[4-7]/.test(dialect) ? draft07 : draft2020;
  try {
    return ajv.compile(stripDialect(schema));
  } catch {
    return null;
  }
}

function stripDialect(schema: object): object {
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return rest;
}

function describeError(error: ErrorObject): string {
  const where = error.instancePath ? `\`${error.instancePath.slice(1).replaceAll('/', '.')}\`` : 'arguments';
  switch (error.keyword) {
    case 'required':
      return `missing required argument \`${[error.instancePath.slice(1).replaceAll('/', '.'), (error.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.')}\``;
    case 'additionalProperties':
      return `unknown argument \`${(error.params as { additionalProperty: string }).additionalProperty}\`${error.instancePath ? ` in ${where}` : ''}`;
    case 'enum':
      return `${where} must be one of ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}`;
    default:
      return `${where} ${error.message ?? 'is invalid'}`;
  }
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
 * reported.
 */
export function checkLiteralArguments(tool: Pick<Tool, 'inputSchema'>, withValue: Record<string, unknown>): string[] {
  const dynamic = new Set(Object.keys(withValue).filter((key) => containsExpression(withValue[key])));
  const problems = checkToolArguments(tool, withValue);
  return problems.filter((problem) => {
    for (const key of dynamic) {
      if (problem.startsWith(`\`${key}\``) || problem.startsWith(`\`${key}.`)) return false;
    }
    return true;
  });
}
