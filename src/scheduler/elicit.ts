import type { ElicitationAnswer, ElicitationHandler, ElicitationRequest } from '../apps/connection.js';
import { addKeepingEnds, MAX_RECORDED_MESSAGE_CHARS, type ElicitationRecord } from '../artifacts/run-record.js';
import { cutText } from '../terminal-text.js';
import { evaluateTemplate, type ExpressionContext } from '../workflow/expressions.js';
import type { Step } from '../workflow/types.js';
import type { FieldsPrompter } from './events.js';

/**
 * Answers a tool's mid-call questions for one call: first from the step's
 * `elicit:` map, then (for what is left) on the terminal, else declines.
 * An accepted answer gets the schema's `default` for every field nobody
 * filled in (SEP-1034); a step with an `elicit:` map accepts a question its
 * defaults answer. Every question and its outcome is appended to `log`
 * (its message cut to MAX_RECORDED_MESSAGE_CHARS; past MAX_RECORDED_ENTRIES,
 * the first and the latest questions are kept).
 */
export function createElicitationHandler(
  step: Step,
  ctx: ExpressionContext,
  prompter: FieldsPrompter | undefined,
  signal: AbortSignal,
  log: ElicitationRecord[],
  item?: number,
): ElicitationHandler {
  return async (request: ElicitationRequest): Promise<ElicitationAnswer> => {
    const properties = (request.requestedSchema.properties ?? {}) as Record<string, { type?: string; description?: string; enum?: unknown[]; default?: unknown }>;
    const required = new Set(request.requestedSchema.required ?? []);
    const given = step.elicit ? (evaluateTemplate(step.elicit, ctx) as Record<string, unknown>) : {};
    // The field names are the app's: own keys only (`toString` is not a field the workflow gave), and
    // built with fromEntries, where `__proto__` is a field like any other.
    const content: Record<string, unknown> = Object.fromEntries(Object.keys(properties).filter((name) => Object.hasOwn(given, name)).map((name) => [name, given[name]]));
    const fromWorkflow = Object.keys(content);
    const missing = Object.keys(properties).filter((name) => !Object.hasOwn(content, name));
    const defaults = defaultsOf(properties);
    const missingRequired = missing.filter((name) => required.has(name) && !Object.hasOwn(defaults, name));
    const defaulted = missing.filter((name) => Object.hasOwn(defaults, name));

    let answer: ElicitationAnswer;
    let source: ElicitationRecord['source'];
    if (missingRequired.length === 0 && (fromWorkflow.length > 0 || (step.elicit !== undefined && defaulted.length > 0))) {
      answer = { action: 'accept', content: { ...defaults, ...content } };
      source = 'workflow';
    } else if (prompter) {
      const asked = await prompter({
        app: step.app,
        tool: step.tool,
        stepId: step.id,
        item,
        message: request.message,
        fields: missing.map((name) => ({ name, type: properties[name]?.type ?? 'string', description: properties[name]?.description, required: required.has(name) && !Object.hasOwn(defaults, name), enum: properties[name]?.enum })),
        signal,
      });
      answer = asked.action === 'accept' ? { action: 'accept', content: { ...defaults, ...content, ...withoutBlanks(asked.content) } } : { action: asked.action };
      source = 'terminal';
    } else {
      answer = { action: 'decline' };
      source = 'none';
    }
    const answered = answer.action === 'accept' ? Object.keys(answer.content ?? {}) : [];
    addKeepingEnds(log, { message: cutText(request.message, MAX_RECORDED_MESSAGE_CHARS), action: answer.action, answered, source });
    return answer;
  };
}

/** Each field's schema `default`, where it has one. */
function defaultsOf(properties: Record<string, { default?: unknown }>): Record<string, unknown> {
  // fromEntries: a field the app calls `__proto__` stays a field.
  return Object.fromEntries(Object.entries(properties).filter(([, schema]) => schema && Object.hasOwn(schema, 'default')).map(([name, schema]) => [name, schema.default]));
}

/** An answer's fields without those left unset, so a default stands where the user typed nothing. */
function withoutBlanks(content: Record<string, unknown> | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(content ?? {}).filter(([, value]) => value !== undefined));
}
