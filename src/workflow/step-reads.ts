// What a loaded step's expressions read, with where each read is written:
// the raw material of the checks that need the apps' tools (`validate
// --online`, `run --dry-run`): output fields against the producer's
// outputSchema, and a value's type against the consumer's inputSchema.
import type { YamlPath } from '../config/yaml-source.js';
import { data, type Expr } from '@actions/expressions';
import { Binary, FunctionCall, Grouping, Literal, Unary } from '@actions/expressions/ast';
import { readAccessChain, readFacts, readPlainFacts, type Access, type ExpressionFacts } from './expression-access.js';
import { parseCached } from './expression-parser.js';
import { readCondition } from './expressions.js';
import { splitTemplateCached } from './template-parts.js';
import type { InputSpec, InputType, Step, TemplateValue } from './types.js';

/** One context access in a step's expressions, and where it is written. */
export interface ExpressionRead {
  access: Access;
  /** The string it is written in, and where that string is in the workflow. */
  path: YamlPath;
  value: string;
  /** Where a problem with it is reported: its `${{`, or the access itself in a bare `if:`. */
  offset: number;
}

const STEPS_CONTEXT: ReadonlySet<string> = new Set(['steps']);

/**
 * Every read of the given contexts (by default `steps.<id>...`) in the step
 * (index `index` of its workflow): `with`, `foreach`, `elicit` and `if`.
 */
export function collectStepReads(step: Step, index: number, contexts: ReadonlySet<string> = STEPS_CONTEXT): ExpressionRead[] {
  const reads: ExpressionRead[] = [];
  const add = (facts: ExpressionFacts, path: YamlPath, value: string, at: (position: number) => number) => {
    for (const access of facts.accesses) if (contexts.has(access.context)) reads.push({ access, path, value, offset: at(access.position) });
  };
  const visit = (value: TemplateValue | undefined, path: (string | number)[]): void => {
    if (typeof value === 'string') {
      if (!value.includes('${{')) return;
      for (const part of splitTemplateCached(value).parts) {
        if (typeof part === 'string') continue;
        const facts = factsOf(part.source, 'template');
        if (facts) add(facts, [...path], value, () => part.start);
      }
    } else if (Array.isArray(value)) {
      value.forEach((entry, i) => visit(entry, [...path, i]));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, entry] of Object.entries(value)) visit(entry, [...path, key]);
    }
  };
  visit(step.with, ['steps', index, 'with']);
  visit(step.foreach, ['steps', index, 'foreach']);
  visit(step.elicit, ['steps', index, 'elicit']);
  if (step.if !== undefined) {
    const condition = readCondition(step.if);
    const facts = condition.ok ? factsOf(condition.source, 'condition') : undefined;
    // `if` is kept without its ${{ }}: offsets are into that text, found again in the file by locateInValue.
    if (condition.ok && facts) add(facts, ['steps', index, 'if'], step.if, condition.at);
  }
  return reads;
}

function factsOf(source: string, mode: 'template' | 'condition'): ExpressionFacts | undefined {
  const plain = mode === 'template' ? readPlainFacts(source) : undefined;
  if (plain) return plain;
  const parsed = parseCached(source, mode);
  return parsed.ok ? readFacts(parsed.expr, source) : undefined;
}

/** What a value is, as a JSON Schema type name. */
export type ValueType = InputType | 'null';

/** What the type of a value depends on besides the expression itself. */
export interface TypeSources {
  inputs: Record<string, InputSpec>;
  /** The steps by id. */
  steps: ReadonlyMap<string, Step>;
  /** The type of `steps.<id>.outputs...` (path after `outputs`), from the producer's outputSchema; undefined when unknown. */
  outputType(step: Step, path: Access['path']): ValueType | undefined;
}

const STRING_FUNCTIONS = new Set(['format', 'join', 'tojson']);
const BOOLEAN_FUNCTIONS = new Set(['contains', 'startswith', 'endswith']);

/**
 * The type a `with` value has once evaluated, where it is certain; undefined
 * when it is not known. Text around ${{ }} makes a string; a lone ${{ }}
 * keeps the type of what it reads.
 */
export function inferValueType(value: TemplateValue, sources: TypeSources): ValueType | undefined {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (!value.includes('${{')) return 'string';
  const { parts, unterminatedAt } = splitTemplateCached(value);
  const only = parts[0];
  if (unterminatedAt !== undefined) return undefined;
  if (parts.length !== 1 || typeof only !== 'object') return 'string';
  const plain = readPlainFacts(only.source);
  if (plain) return typeOfAccess(plain.accesses[0], sources);
  const parsed = parseCached(only.source, 'template');
  return parsed.ok ? typeOfNode(parsed.expr, only.source, sources) : undefined;
}

function typeOfNode(expr: Expr, source: string, sources: TypeSources): ValueType | undefined {
  if (expr instanceof Binary || expr instanceof Unary) return 'boolean'; // comparisons and `!`: the language has no arithmetic
  if (expr instanceof Grouping) return typeOfNode(expr.group, source, sources);
  if (expr instanceof Literal) {
    const { kind, value } = expr.literal as { kind: data.Kind; value?: unknown };
    if (kind === data.Kind.String) return 'string';
    if (kind === data.Kind.Boolean) return 'boolean';
    if (kind === data.Kind.Number) return Number.isInteger(value) ? 'integer' : 'number';
    return kind === data.Kind.Null ? 'null' : undefined;
  }
  if (expr instanceof FunctionCall) {
    const name = expr.functionName.lexeme.toLowerCase();
    return STRING_FUNCTIONS.has(name) ? 'string' : BOOLEAN_FUNCTIONS.has(name) ? 'boolean' : undefined;
  }
  const access = readAccessChain(expr, source);
  return access ? typeOfAccess(access, sources) : undefined;
}

function typeOfAccess(access: Access, sources: TypeSources): ValueType | undefined {
  const first = access.path[0];
  const second = access.path[1];
  switch (access.context) {
    case 'inputs': {
      if (typeof first !== 'string' || access.path.length !== 1) return undefined;
      const spec = sources.inputs[first] ?? Object.entries(sources.inputs).find(([name]) => name.toLowerCase() === first.toLowerCase())?.[1];
      return spec?.type;
    }
    case 'run':
    case 'workflow':
      return access.path.length === 1 ? 'string' : undefined;
    case 'index':
      return access.path.length === 0 ? 'integer' : undefined;
    case 'steps': {
      const step = typeof first === 'string' ? sources.steps.get(first) : undefined;
      if (!step || typeof second !== 'string') return undefined;
      const property = second.toLowerCase();
      const foreach = step.foreach !== undefined;
      if (access.path.length === 2) {
        if (property === 'status') return 'string';
        if (property === 'files') return 'array';
        if (property === 'text') return foreach ? 'array' : 'string';
      }
      return property === 'outputs' ? sources.outputType(step, access.path.slice(2)) : undefined;
    }
    default:
      return undefined;
  }
}
