// Static checks of what an expression reads: declared inputs, step
// properties, `item` outside foreach, properties of run/workflow/trigger, and
// the warnings (unset env, impossible status values). Each problem is at the
// access's offset in the expression; the caller turns that into a position.
import { suggestClosest } from '../config/schema-diagnostics.js';
import type { Access, ExpressionFacts, Segment } from './expression-access.js';

/** What `steps.<id>` has. */
export const STEP_PROPERTIES: readonly string[] = ['status', 'outputs', 'text', 'files', 'error'];
/** Every status a step can have. */
export const STEP_STATUSES: readonly string[] = ['pending', 'queued', 'running', 'waiting', 'succeeded', 'failed', 'skipped', 'denied', 'cancelled'];
// GitHub Actions spells them differently; a condition written from habit is never true.
const GITHUB_STATUSES: Record<string, string> = { success: 'succeeded', failure: 'failed', canceled: 'cancelled' };
const CONTEXT_PROPERTIES: Record<string, readonly string[]> = {
  run: ['id', 'dir', 'artifacts'],
  workflow: ['name'],
  // Every field a trigger record has: manual runs have only `type`; the rest are watch and schedule fields.
  trigger: ['type', 'path', 'event', 'time', 'source', 'hash', 'occurrence', 'cron', 'timezone', 'catchUp'],
};

/** Where in a step an expression is written. */
export type ExpressionField = 'with' | 'elicit' | 'foreach' | 'if';

/** What an expression may read where it is written. */
export interface ExpressionScope {
  /** Declared inputs by lower-case name (names resolve case-insensitively at run time). */
  inputs: ReadonlyMap<string, string>;
  /** The environment `env.X` is checked against; undefined: not checked. */
  env?: Readonly<Record<string, string | undefined>>;
  field: ExpressionField;
  /** Whether the step has `foreach`. */
  foreach: boolean;
}

/** One problem with an access, at its offset in the expression's source. */
export interface AccessProblem {
  message: string;
  hint?: string;
  severity?: 'warning';
  position: number;
}

const NO_PROBLEMS: readonly AccessProblem[] = [];

/** Every problem with what one expression reads. */
export function checkFacts(facts: ExpressionFacts, scope: ExpressionScope): readonly AccessProblem[] {
  let problems: AccessProblem[] | undefined; // most expressions have none: no array for them
  for (const access of facts.accesses) {
    const problem = checkAccess(access, scope);
    if (problem) (problems ??= []).push({ ...problem, position: access.position });
  }
  if (facts.statusComparisons.length === 0) return problems ?? NO_PROBLEMS;
  problems ??= [];
  for (const { access, operator, value } of facts.statusComparisons) {
    if (STEP_STATUSES.includes(value.toLowerCase())) continue;
    const closest = GITHUB_STATUSES[value.toLowerCase()] ?? closestName(value, STEP_STATUSES);
    problems.push({
      message: `\`${renderAccess(access, 2)}\` is never \`${value}\`, so \`${operator} '${value}'\` is always ${operator === '==' ? 'false' : 'true'}`,
      hint: `${closest ? `did you mean \`${closest}\`? ` : ''}a step's status is one of ${STEP_STATUSES.join(', ')}`,
      severity: 'warning',
      position: access.position,
    });
  }
  return problems;
}

function checkAccess(access: Access, scope: ExpressionScope): Omit<AccessProblem, 'position'> | undefined {
  const path = access.path;
  const first = path[0];
  switch (access.context) {
    case 'inputs':
      return typeof first === 'string' ? checkInput(first, scope) : undefined;
    case 'env':
      return typeof first === 'string' && !access.tested && scope.field !== 'if' ? checkEnv(first, scope) : undefined;
    case 'item':
    case 'index':
      return checkItem(access.context, scope);
    case 'steps':
      return path.length >= 2 ? checkStepProperty(access, path[1], path[2]) : undefined;
    default: {
      const known = CONTEXT_PROPERTIES[access.context];
      if (!known || typeof first !== 'string' || known.some((name) => name.toLowerCase() === first.toLowerCase())) return undefined;
      const closest = closestName(first, known);
      return {
        message: `\`${renderAccess(access, 1)}\` does not exist, so it is always empty`,
        hint: `${closest ? `did you mean \`${access.context}.${closest}\`? ` : ''}\`${access.context}\` has ${known.join(', ')}`,
      };
    }
  }
}

function checkInput(name: string, scope: ExpressionScope): Omit<AccessProblem, 'position'> | undefined {
  if (scope.inputs.has(name.toLowerCase())) return undefined;
  const declared = [...scope.inputs.values()];
  const closest = closestName(name, declared);
  const list = declared.length > 0 ? `declared inputs: ${declared.join(', ')}` : 'this workflow declares no inputs';
  return {
    message: `\`inputs.${name}\` is not a declared input, so it would always be empty`,
    hint: closest ? `did you mean \`inputs.${closest}\`? ${list}` : `declare it under \`inputs:\` (${list})`,
  };
}

// The environment's names, lower-cased once per environment: env.X resolves case-insensitively at run time.
const lowerCaseNames = new WeakMap<object, Set<string>>();

function checkEnv(name: string, scope: ExpressionScope): Omit<AccessProblem, 'position'> | undefined {
  const env = scope.env;
  if (!env || env[name] !== undefined) return undefined;
  let names = lowerCaseNames.get(env);
  if (!names) lowerCaseNames.set(env, (names = new Set(Object.keys(env).filter((key) => env[key] !== undefined).map((key) => key.toLowerCase()))));
  if (names.has(name.toLowerCase())) return undefined;
  return {
    message: `\`env.${name}\` is not set in the environment, so it reads as empty`,
    hint: `set ${name} before running, or give a fallback: \${{ env.${name} || 'default' }}`,
    severity: 'warning',
  };
}

function checkItem(name: string, scope: ExpressionScope): Omit<AccessProblem, 'position'> | undefined {
  if (!scope.foreach) {
    return {
      message: `\`${name}\` is set only in a step with \`foreach\`, so here it is always empty`,
      hint: 'add `foreach: ${{ <a list> }}` to this step to call it once per item',
    };
  }
  if (scope.field === 'foreach') {
    return { message: `\`${name}\` is not set in \`foreach\` itself, which gives the list the items come from`, hint: 'read the list from inputs or steps.<id>.outputs' };
  }
  if (scope.field === 'if') {
    return {
      message: `\`${name}\` is not set in \`if\`: the condition is evaluated once for the whole step, before its items`,
      hint: 'filter the list in `foreach` instead, e.g. with a runner.transform step before this one',
    };
  }
  return undefined;
}

function checkStepProperty(access: Access, property: Segment, next: Segment | undefined): Omit<AccessProblem, 'position'> | undefined {
  const name = typeof property === 'string' ? property.toLowerCase() : undefined;
  if (property === null) return undefined;
  if (name === undefined || !STEP_PROPERTIES.includes(name)) {
    const closest = typeof property === 'string' ? closestName(property, STEP_PROPERTIES) : undefined;
    return {
      message: `\`${renderAccess(access, 2)}\` is not a property of a step, so it is always empty`,
      hint: `${closest ? `did you mean \`${renderAccess(access, 1)}.${closest}\`? ` : ''}a step has ${STEP_PROPERTIES.join(', ')}`,
    };
  }
  if (typeof next !== 'string' || !(name === 'status' || name === 'text' || name === 'files')) return undefined;
  const what = name === 'status' ? 'a string' : name === 'text' ? 'a string (a list for a foreach step)' : 'a list of paths';
  const hint =
    name === 'status' ? `compare it instead: ${renderAccess(access, 2)} == 'succeeded'`
    : name === 'files' ? `index it instead: ${renderAccess(access, 2)}[0]`
    : `to read JSON text, use fromJSON(${renderAccess(access, 2)}).${next}, or read \`outputs\``;
  return { message: `\`${renderAccess(access, 3)}\` reads a property of \`${property}\`, which is ${what}, so it is always empty`, hint };
}

/** `steps.a.outputs` from an access, up to `length` segments of its path. */
export function renderAccess(access: Access, length: number): string {
  let text = access.context;
  for (const segment of access.path.slice(0, length)) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (segment === null) text += '[…]';
    else text += /^[A-Za-z_][\w-]*$/.test(segment) ? `.${segment}` : `['${segment.replaceAll("'", "''")}']`;
  }
  return text;
}

/** Offsets of `{{ ... }}` written without `$` in literal text: it would be sent as written. */
export function findBareBraces(text: string): number[] {
  const offsets: number[] = [];
  for (let open = text.indexOf('{{'); open !== -1; open = text.indexOf('{{', open + 2)) {
    if (text[open - 1] === '$') continue;
    const close = text.indexOf('}}', open + 2);
    if (close === -1) break;
    if (text.slice(open + 2, close).trim() !== '') offsets.push(open);
    open = close;
  }
  return offsets;
}

/**
 * The name `word` was probably meant to be: a close spelling, else the one
 * name it abbreviates (`imgs` → `images`) or that abbreviates it.
 */
function closestName(word: string, names: readonly string[]): string | undefined {
  const close = suggestClosest(word, names);
  if (close !== undefined || word.length < 3) return close;
  const lower = word.toLowerCase();
  const matches = names.filter((name) => {
    const other = name.toLowerCase();
    return Math.abs(other.length - lower.length) <= 4 && (isSubsequence(lower, other) || isSubsequence(other, lower));
  });
  return matches.length === 1 ? matches[0] : undefined;
}

function isSubsequence(short: string, long: string): boolean {
  let at = 0;
  for (const char of long) if (char === short[at]) at++;
  return at === short.length;
}
