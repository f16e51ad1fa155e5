import { resolve } from 'node:path';
import { RunnerError, throwOnDiagnostics, type Diagnostic } from '../errors.js';
import { hintFor, renderValue } from '../config/schema-diagnostics.js';
import { locationAt, parseJsonSource, readSourceFile } from '../config/yaml-source.js';
import type { InputType, Workflow } from './types.js';

// Workflow inputs from the command line (`-i name=value`, strings converted to
// the declared type; `-i name=@file.json`, a value read from a JSON file) and
// from an inputs file (`--inputs FILE.json`, values already of the declared
// type). `-i` wins over the file, the file over the default.

/**
 * A `name=value` pair from the command line after its `@file.json` was read:
 * `text` to convert to the declared type, or `value` as the file held it.
 */
export type CliPair = { name: string; text: string } | { name: string; value: unknown; file: string };

/** How a message names each input type. */
export const TYPE_PHRASES: Record<InputType, string> = {
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
  source: { cliPairs?: readonly (string | CliPair)[]; file?: string },
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
  for (const entry of source.cliPairs ?? []) {
    const pair = typeof entry === 'string' ? (splitPair(entry) ?? entry) : entry;
    if (typeof pair === 'string') {
      diagnostics.push({ message: `\`-i ${pair}\`: expected name=value` });
      continue;
    }
    const { name } = pair;
    const spec = Object.hasOwn(workflow.inputs, name) ? workflow.inputs[name] : undefined;
    attempted.add(name);
    if (!spec) {
      diagnostics.push(unknownInput(workflow, name, `\`-i ${name}\``));
      continue;
    }
    if ('file' in pair) {
      if (matchesInputType(pair.value, spec.type)) values.set(name, pair.value);
      else diagnostics.push({ message: `\`-i ${name}=@${pair.file}\`: expected ${describeInputType(spec.type)}, got ${renderJson(pair.value)}` });
      continue;
    }
    const value = convertCliValue(pair.text, spec.type);
    if (value === undefined) {
      diagnostics.push({ message: `\`-i ${name}\`: expected ${describeInputType(spec.type)}, got \`${pair.text}\`` });
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

/** `name=value` split at the first `=`; undefined without a name. */
export function splitPair(pair: string): { name: string; text: string } | undefined {
  const equals = pair.indexOf('=');
  return equals <= 0 ? undefined : { name: pair.slice(0, equals), text: pair.slice(equals + 1) };
}

/**
 * Reads the values given as `name=@file.json` (`flag` is how messages name
 * them: `-i`): each file, relative to `cwd`, holds one JSON value. `@@` at the
 * start stands for a literal `@`. Other pairs are left as text; a pair
 * without `=` is left for the caller to report. A missing, unreadable,
 * too large or invalid file throws a RunnerError with code `inputs`, naming it.
 */
export async function readValueFiles(pairs: readonly string[], cwd: string, flag: string): Promise<(string | CliPair)[]> {
  return Promise.all(
    pairs.map(async (entry) => {
      const pair = splitPair(entry);
      if (!pair || !pair.text.startsWith('@')) return pair ?? entry;
      if (pair.text.startsWith('@@')) return { name: pair.name, text: pair.text.slice(1) };
      const file = pair.text.slice(1);
      return { name: pair.name, value: await readJsonValueFile(file, cwd, `\`${flag}${pair.name}=@${file}\``), file };
    }),
  );
}

/** One JSON value from a file named on the command line (`what` says where), under the same size limit as other files. */
async function readJsonValueFile(file: string, cwd: string, what: string): Promise<unknown> {
  const diagnostics: Diagnostic[] = [];
  let text: string | undefined;
  try {
    text = await readSourceFile(resolve(cwd, file), file, diagnostics, {
      kind: 'value files',
      hint: 'pass large data as a file in the artifacts folder and its path as the value',
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new RunnerError('inputs', `${what}: cannot read \`${file}\`: ${code === 'ENOENT' ? 'no such file' : (code ?? (error as Error).message)}`, {
      hint: `the path is relative to the current folder (${cwd}); write @@ for a value that starts with a literal @`,
      cause: error,
    });
  }
  throwOnDiagnostics('inputs', diagnostics);
  const { data } = parseJsonSource(text!, file, diagnostics);
  const hint = `${what} reads one JSON value from the file (a text is a JSON string, in double quotes)`;
  throwOnDiagnostics('inputs', diagnostics.map((diagnostic) => ({ ...diagnostic, hint })));
  return data;
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
