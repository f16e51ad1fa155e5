import { loadHistorySettings } from '../../config/history-settings.js';
import { ExitCode } from '../../errors.js';
import { approverName } from '../../scheduler/approval.js';
import { answerWaitingStep } from '../../scheduler/answer-approval.js';
import { withRunStore } from '../../store/run-history.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { jsonForOutput } from '../../terminal-text.js';

/**
 * `runner approve RUN STEP` / `runner deny RUN STEP`: answers a step waiting
 * for an approval, as the current user (RUNNER_USER, else the OS account).
 * Runs nothing itself: serve continues the run, else `runner resume` does.
 */
export async function answerCommand(decision: 'approved' | 'denied', run: string, step: string, options: GlobalOptions & { json?: boolean }, io: CliIO): Promise<number> {
  const config = await loadHistorySettings({ configPath: options.config, cwd: io.cwd, env: io.env });
  const answered = await withRunStore(config, (store) =>
    answerWaitingStep(store, config.artifacts, { run, step, decision, by: approverName(io.env), via: 'cli', nowMs: Date.now() }),
  );
  if (options.json) {
    io.stdout(jsonForOutput({ run: answered.runId, step: answered.stepId, approval: answered.approval }));
    return ExitCode.succeeded;
  }
  const verb = decision === 'approved' ? 'approved' : 'denied';
  const next = decision === 'approved' ? 'runs it' : 'ends it denied (nothing is sent)';
  io.stdout(
    `${verb} step ${answered.stepId} of run ${answered.runId} as ${answered.approval.by} at ${answered.approval.at}\n` +
      `  a \`runner serve\` that started the run continues it by itself; otherwise \`runner resume ${answered.runId}\` ${next}\n`,
  );
  return ExitCode.succeeded;
}
