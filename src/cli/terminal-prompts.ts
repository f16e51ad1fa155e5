import { createInterface } from 'node:readline/promises';
import type { Approver, FieldsPrompter } from '../scheduler/events.js';
import { allowRuleFor } from '../scheduler/policy.js';
import { maskSecretsDeep } from '../secrets.js';
import type { CliIO } from './io.js';
import { safeForTerminal } from '../terminal-text.js';

/**
 * Questions on the terminal: approval of `ask` calls (app, tool, hints and the
 * arguments with secrets masked) and answers to a tool's mid-call questions.
 * One question at a time, even when calls run in parallel. Only used when
 * stdin and stderr are TTYs.
 */
export function createTerminalPrompts(
  io: CliIO,
  secretValues: readonly string[],
): { approver: Approver; prompter: FieldsPrompter; isPrompting: () => boolean } {
  let queue: Promise<unknown> = Promise.resolve();
  let prompting = 0;
  const serialize = <T>(task: () => Promise<T>): Promise<T> => {
    const run = async () => {
      prompting++;
      try {
        return await task();
      } finally {
        prompting--;
      }
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  };
  const withReadline = async <T>(signal: AbortSignal, use: (ask: (question: string) => Promise<string>) => Promise<T>): Promise<T> => {
    const rl = createInterface({ input: io.stdin, output: process.stderr, terminal: true });
    try {
      return await use((question) => rl.question(question, { signal }));
    } finally {
      rl.close();
    }
  };

  // Answers that stand for more than one call: "yes for this tool" for the rest of the run, and a foreach
  // step's answer for all of its items (asked once per step, not once per item).
  const allowedTools = new Set<string>();
  const stepAnswers = new Map<string, boolean>();
  const approver: Approver = (request) =>
    serialize(async () => {
      if (request.signal.aborted) return false;
      const name = `${request.app}.${request.tool}`;
      if (allowedTools.has(name)) return true;
      const foreach = request.item !== undefined;
      const earlier = foreach ? stepAnswers.get(request.stepId) : undefined;
      if (earlier !== undefined) return earlier;
      const hints = Object.entries(request.hints)
        .filter(([, on]) => on)
        .map(([name]) => name)
        .join(', ');
      const args = JSON.stringify(maskSecretsDeep(request.args, secretValues), null, 2).split('\n').join('\n    ');
      const which = foreach ? `step ${request.stepId}, every item; item ${request.item} shown` : `step ${request.stepId}`;
      io.stderr(
        safeForTerminal(
          `\n? ${name} (${which}) needs approval: ${request.reason}\n` +
            `    hints: ${hints || 'none'}\n    arguments: ${args}\n` +
            `    to stop being asked, add under policy.rules in runner.config.yaml: ${allowRuleFor(name)}\n`,
        ),
      );
      const question = foreach
        ? `  Allow? [y] yes, every item of ${request.stepId}  [a] yes, and ${name} for the rest of this run  [N] no, none of them: `
        : `  Allow? [y] yes, this call  [a] yes, and ${name} for the rest of this run  [N] no: `;
      let answer: string;
      try {
        answer = (await withReadline(request.signal, (ask) => ask(question))).trim().toLowerCase();
      } catch {
        return false;
      }
      const always = /^a(lways)?$/.test(answer);
      const allowed = always || /^y(es)?$/.test(answer);
      if (always) allowedTools.add(name);
      if (foreach) stepAnswers.set(request.stepId, allowed);
      return allowed;
    });

  const prompter: FieldsPrompter = (request) =>
    serialize(async () => {
      if (request.signal.aborted) return { action: 'cancel' as const };
      // The question and its fields are the app's words: what would steer the terminal is escaped.
      io.stderr(safeForTerminal(`\n? ${request.app}.${request.tool} (step ${label(request.stepId, request.item)}) asks: ${request.message}\n  (empty answer to a required field declines)\n`));
      try {
        return await withReadline(request.signal, async (ask) => {
          const content: Record<string, unknown> = {};
          for (const field of request.fields) {
            const choices = field.enum ? ` [${field.enum.join('/')}]` : '';
            const answer = (await ask(safeForTerminal(`  ${field.name}${field.required ? '' : ' (optional)'}${choices}${field.description ? ` — ${field.description}` : ''}: `))).trim();
            if (answer === '') {
              if (field.required) return { action: 'decline' as const };
              continue;
            }
            content[field.name] = convertAnswer(answer, field.type);
          }
          return { action: 'accept' as const, content };
        });
      } catch {
        return { action: 'cancel' as const };
      }
    });

  return { approver, prompter, isPrompting: () => prompting > 0 };
}

function label(stepId: string, item: number | undefined): string {
  return item === undefined ? stepId : `${stepId}[${item}]`;
}

function convertAnswer(answer: string, type: string): unknown {
  if (type === 'number' || type === 'integer') {
    const value = Number(answer);
    return Number.isFinite(value) ? value : answer;
  }
  if (type === 'boolean') return /^(y|yes|true|1)$/i.test(answer);
  return answer;
}
