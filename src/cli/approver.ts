import { createInterface } from 'node:readline/promises';
import type { Approver } from '../scheduler/events.js';
import { maskSecretsDeep } from '../secrets.js';
import type { CliIO } from './io.js';

/**
 * Asks on the terminal before an `ask` call: shows app, tool, hints and the
 * arguments (secrets masked). One question at a time, even when calls run in
 * parallel. Only used when stdin and stderr are TTYs.
 */
export function createTerminalApprover(io: CliIO, secretValues: readonly string[]): Approver {
  let queue: Promise<unknown> = Promise.resolve();
  return (request) => {
    const ask = async (): Promise<boolean> => {
      if (request.signal.aborted) return false;
      const hints = Object.entries(request.hints)
        .filter(([, on]) => on)
        .map(([name]) => name)
        .join(', ');
      const args = JSON.stringify(maskSecretsDeep(request.args, secretValues), null, 2).split('\n').join('\n    ');
      io.stderr(
        `\n? ${request.app}.${request.tool} (step ${request.stepId}${request.item === undefined ? '' : `[${request.item}]`}) needs approval: ${request.reason}\n` +
          `    hints: ${hints || 'none'}\n    arguments: ${args}\n`,
      );
      const rl = createInterface({ input: io.stdin, output: process.stderr, terminal: true });
      try {
        const answer = await rl.question('  Allow this call? [y/N] ', { signal: request.signal });
        return /^y(es)?$/i.test(answer.trim());
      } catch {
        return false;
      } finally {
        rl.close();
      }
    };
    const result = queue.then(ask, ask);
    queue = result.catch(() => undefined);
    return result;
  };
}
