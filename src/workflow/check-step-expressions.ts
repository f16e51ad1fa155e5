// Every expression of one step, checked as it is collected: syntax, what it
// reads (expression-checks.ts), `{{ }}` without `$`; and the `steps.<id>`
// references it makes, resolved once every step id is known
// (step-references.ts). Positions are looked up only for problems.
import { describePath } from '../config/schema-diagnostics.js';
import { locatePath, type YamlPath } from '../config/yaml-source.js';
import { readFacts, readPlainComparisonFacts, readPlainFacts, type ExpressionFacts, type Segment } from './expression-access.js';
import { checkFacts, findBareBraces, type ExpressionScope } from './expression-checks.js';
import { parseCached, quotedExpression } from './expression-parser.js';
import { readCondition } from './expressions.js';
import { isRecord } from '../is-record.js';
import { WORKFLOW_NAMES, type LoadContext as Context } from './load-context.js';
import { locateInValue } from './locate-in-string.js';
import type { RawStep } from './schema.js';
import { splitTemplate } from './template-parts.js';

/** A `steps.<id>` read in a string of a step, resolved against every step's id as soon as the step is read (linkStep). */
export interface Reference {
  id: string;
  /** Where the string is, and the string itself. */
  path: YamlPath;
  value: string;
  /** The offset in the string that problems are reported at: the `${{`, or the access in a bare condition. */
  offset: number;
  /** `steps.<id>.<property>` (lower-case) and the segment after it, for checks that need the step. */
  property?: string;
  next?: Segment;
}

interface Scan {
  context: Context;
  scope: ExpressionScope;
  references: Reference[];
}

interface Problem {
  message: string;
  hint?: string;
  severity?: 'warning';
}

/** Checks the step's expressions (`with`, `foreach`, `elicit`, `if`) and collects its `steps.<id>` references. */
export function collectReferences(raw: RawStep, index: number, context: Context): Reference[] {
  const scope: ExpressionScope = { inputs: context.inputNames, env: context.env, field: 'with', foreach: raw.foreach !== undefined };
  const scan: Scan = { context, scope, references: [] };
  const path: (string | number)[] = ['steps', index];
  for (const field of ['with', 'foreach', 'elicit'] as const) {
    if (raw[field] === undefined) continue;
    scope.field = field;
    path.push(field);
    scanValue(raw[field], path, scan);
    path.pop();
  }
  if (typeof raw.if === 'string') {
    scope.field = 'if';
    scanCondition(raw.if, [...path, 'if'], scan);
  }
  return scan.references;
}

function scanValue(value: unknown, path: (string | number)[], scan: Scan): void {
  if (typeof value === 'string') {
    if (value.includes('{{')) scanString(value, path, scan);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      scanValue(value[i], path, scan);
      path.pop();
    }
  } else if (isRecord(value)) {
    for (const key of Object.keys(value)) {
      path.push(key);
      if (key.includes('${{')) warnExpressionKey(key, path, scan);
      scanValue(value[key], path, scan);
      path.pop();
    }
  }
}

function scanString(text: string, path: (string | number)[], scan: Scan): void {
  // Not the cached split: loading reads each string once, and most strings of a large workflow differ (`-${i}`),
  // so the cache held 10,000 split strings for nothing, and the GC copied them: 15-20 ms of a 10,000-step load.
  // A run caches what it evaluates.
  const { parts, unterminatedAt } = splitTemplate(text);
  let shared: YamlPath | undefined; // one copy of the path for every reference in this string
  let cursor = 0;
  for (const part of parts) {
    if (typeof part === 'string') {
      if (part.includes('{{')) for (const at of findBareBraces(part)) warnBareBraces(text, cursor + at, path, scan);
      cursor += part.length;
      continue;
    }
    cursor = part.start + part.raw.length;
    let facts = readPlainFacts(part.source);
    if (facts === undefined) {
      const parsed = parseCached(part.source, 'template');
      if (!parsed.ok) {
        report(scan, path, text, part.start, { message: `${parsed.message} in \`${quotedExpression(part.raw)}\``, hint: parsed.hint });
        continue;
      }
      facts = readFacts(parsed.expr, part.source);
    }
    for (const problem of checkFacts(facts, scan.scope)) report(scan, path, text, part.start, problem);
    if (hasStepRead(facts)) addReferences(facts, (shared ??= [...path]), text, () => part.start, scan.references);
  }
  if (unterminatedAt !== undefined) {
    report(scan, path, text, unterminatedAt, {
      message: 'Unterminated ${{: no closing }}',
      hint: "close it with }}; to send the characters ${{ as text, write ${{ '${{' }}",
    });
  }
}

function scanCondition(text: string, path: YamlPath, scan: Scan): void {
  const condition = readCondition(text);
  if (!condition.ok) {
    report(scan, path, text, condition.problem.offset, { message: condition.problem.message });
    return;
  }
  let facts = readPlainComparisonFacts(condition.source);
  if (facts === undefined) {
    const parsed = parseCached(condition.source, 'condition');
    if (!parsed.ok) {
      report(scan, path, text, condition.at(parsed.position), { message: `${parsed.message} in \`${quotedExpression(condition.raw)}\``, hint: parsed.hint });
      return;
    }
    facts = readFacts(parsed.expr, condition.source);
  }
  for (const problem of checkFacts(facts, scan.scope)) report(scan, path, text, condition.at(problem.position), problem);
  addReferences(facts, path, text, (position) => condition.at(position), scan.references);
}

function hasStepRead(facts: ExpressionFacts): boolean {
  for (const access of facts.accesses) if (access.context === 'steps') return true;
  return false;
}

function addReferences(facts: ExpressionFacts, path: YamlPath, value: string, at: (position: number) => number, references: Reference[]): void {
  for (const access of facts.accesses) {
    const id = access.path[0];
    if (access.context !== 'steps' || typeof id !== 'string') continue;
    const property = access.path[1];
    const next = access.path[2];
    // One shape for every reference (no spread of optional keys): 10,000 of them must stay cheap.
    references.push({ id, path, value, offset: at(access.position), property: typeof property === 'string' ? property.toLowerCase() : undefined, next });
  }
}

function warnBareBraces(text: string, offset: number, path: YamlPath, scan: Scan): void {
  const close = text.indexOf('}}', offset);
  const written = text.slice(offset, close + 2);
  report(scan, path, text, offset, {
    message: `\`${written}\` has no \`$\`, so it is sent as the literal text \`${written}\``,
    hint: `expressions are written \`$${written}\``,
    severity: 'warning',
  });
}

function warnExpressionKey(key: string, path: YamlPath, scan: Scan): void {
  const { context } = scan;
  context.diagnostics.push({
    location: locatePath(context.source, path, 'key'),
    message: `${describePath(path.slice(0, -1), context.raw, WORKFLOW_NAMES)}: the key \`${key}\` is sent as written: keys are not evaluated, only values`,
    hint: 'give the name as a fixed key; put ${{ }} in values',
    severity: 'warning',
  });
}

function report(scan: Scan, path: YamlPath, value: string, offset: number, problem: Problem): void {
  const { context } = scan;
  context.diagnostics.push({
    location: locateInValue(context.source, path, value, offset),
    message: `${describePath(path, context.raw, WORKFLOW_NAMES)}: ${problem.message}`,
    ...(problem.hint !== undefined && { hint: problem.hint }),
    ...(problem.severity && { severity: problem.severity }),
  });
}
