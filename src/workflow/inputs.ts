import { RunnerError, throwOnDiagnostics, type Diagnostic } from '../errors.js';
import { hintFor, renderValue } from '../config/schema-diagnostics.js';
import { locationAt, parseJsonSource, readSourceFile } from '../config/yaml-source.js';
import type { InputType, Workflow } from './types.js';

// Workflow inputs from the command line (`-i name=value`, strings converted to
// the declared type) and from an inputs file (`--inputs FILE.json`, values
// already of the declared type). `-i` wins over the file, the file over the
// default.

const TYPE_PHRASES: Record<InputType, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  array: 'a JSON array',
  object: 'a JSON object',
};

/** Whether a value is of an input type (`integer` accepts whole numbers only). */
export function matchesInputType(value: unknown, type: InputType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
}

/** How an input type is named in messages ("an integer"). */
export function describeInputType(type: InputType): string {
  return TYPE_PHRASES[type];
}

/**
 * The inputs of one run: `given` (e.g. the parsed `--inputs` file, values of
 * the declared types), overridden by `source.cliPairs` (`name=value` strings,
 * converted to the declared types), then defaults. Unknown names, missing
 * required inputs and wrong types throw one RunnerError with code `inputs`.
 */
export function resolveInputs(
  workflow: Workflow,
  given: Record<string, unknown>,
  source: { cliPairs?: string[]; file?: string },
): Record<string, unknown> {
  const diagnostics: Diagnostic[] = [];
  const values = new Map<string, unknown>();
  // Inputs given with a wrong value are reported as such, not also as missing.
  const attempted = new Set<string>();
  const fromFile = source.file ? ` in ${source.file}` : '';
  for (const [name, value] of Object.entries(given)) {
    const spec = Object.hasOwn(workflow.inputs, name) ? workflow.inputs[name] : undefined;
    attempted.add(name);
    if (!spec) {
      diagnostics.push(unknownInput(workflow, name, `input \`${name}\`${fromFile}`));
    } else if (!matchesInputType(value, spec.type)) {
      diagnostics.push({ message: `input \`${name}\`${fromFile}: expected ${describeInputType(spec.type)}, got ${renderJson(value)}` });
    } else {
      values.set(name, value);
    }
  }
  for (const pair of source.cliPairs ?? []) {
    const equals = pair.indexOf('=');
    if (equals <= 0) {
      diagnostics.push({ message: `\`-i ${pair}\`: expected name=value` });
      continue;
    }
    const name = pair.slice(0, equals);
    const text = pair.slice(equals + 1);
    const spec = Object.hasOwn(workflow.inputs, name) ? workflow.inputs[name] : undefined;
    attempted.add(name);
    if (!spec) {
      diagnostics.push(unknownInput(workflow, name, `\`-i ${name}\``));
      continue;
    }
    const value = convertCliValue(text, spec.type);
    if (value === undefined) {
      diagnostics.push({ message: `\`-i ${name}\`: expected ${describeInputType(spec.type)}, got \`${text}\`` });
    } else {
      values.set(name, value);
    }
  }

  const inputs: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    if (values.has(name)) inputs[name] = values.get(name);
    else if (spec.default !== undefined) inputs[name] = structuredClone(spec.default);
    else if (spec.required && !attempted.has(name)) {
      diagnostics.push({
        location: spec.location,
        message: `missing required input \`${name}\` (${describeInputType(spec.type)})${spec.description ? `: ${spec.description}` : ''}`,
        hint: `give it with -i ${name}=VALUE or in an --inputs file`,
      });
    }
  }
  throwOnDiagnostics('inputs', diagnostics);
  return inputs;
}

/**
 * Reads an `--inputs` file: a JSON object of input values. A syntax error is
 * reported with line:col; a missing file as `not-found`.
 */
export async function readInputsFile(file: string): Promise<Record<string, unknown>> {
  const diagnostics: Diagnostic[] = [];
  let text: string | undefined;
  try {
    text = await readSourceFile(file, file, diagnostics, {
      kind: 'inputs files',
      hint: 'pass large data as a file in the artifacts folder and its path as the input',
    });
  } catch (error) {
    throw new RunnerError('not-found', `inputs file \`${file}\` cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
  throwOnDiagnostics('inputs', diagnostics);
  const { source, data } = parseJsonSource(text!, file, diagnostics);
  throwOnDiagnostics('inputs', diagnostics);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throwOnDiagnostics('inputs', [{ location: locationAt(source, 0), message: `${file}: expected a JSON object of input values, got ${renderValue(data)}` }]);
  }
  return data as Record<string, unknown>;
}

/** A `-i` value converted to the declared type; undefined when it is not one. */
function convertCliValue(text: string, type: InputType): unknown {
  switch (type) {
    case 'string':
      return text;
    case 'number':
    case 'integer': {
      const value = text.trim() === '' ? NaN : Number(text);
      return matchesInputType(value, type) ? value : undefined;
    }
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : undefined;
    case 'array':
    case 'object': {
      try {
        const value: unknown = JSON.parse(text);
        return matchesInputType(value, type) ? value : undefined;
      } catch {
        return undefined;
      }
    }
  }
}

function unknownInput(workflow: Workflow, name: string, what: string): Diagnostic {
  return {
    message: `unknown input: ${what} is not an input of workflow \`${workflow.name}\``,
    hint: hintFor(name, Object.keys(workflow.inputs), 'its inputs'),
  };
}

function renderJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return `\`${text.length > 60 ? `${text.slice(0, 57)}...` : text}\``;
}
