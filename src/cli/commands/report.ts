import { existsSync } from 'node:fs';
import { loadHistorySettings } from '../../config/history-settings.js';
import { ExitCode, RunnerError } from '../../errors.js';
import { writeRunReport } from '../../report/html/write-report.js';
import { displayRecord, findRun, withRunStore } from '../../store/run-history.js';
import type { CliIO, GlobalOptions } from '../io.js';

/**
 * `runner report ID|latest`: (re)writes the run's report.html from the run
 * store (secrets shown as `***`) and prints its path.
 */
export async function reportCommand(id: string, options: GlobalOptions, io: CliIO): Promise<number> {
  const config = await loadHistorySettings({ configPath: options.config, cwd: io.cwd, env: io.env });
  const record = await withRunStore(config, (store) => displayRecord(findRun(store, config.artifacts, id)));
  if (!existsSync(record.dir)) {
    throw new RunnerError('not-found', `run ${record.id} has no folder any more (${record.dir})`, { hint: 'list runs with `runner runs`' });
  }
  const file = await writeRunReport(record, { artifacts: config.artifacts });
  io.stdout(`${file}\n`);
  return ExitCode.succeeded;
}
