import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadHistorySettings } from '../../config/history-settings.js';
import { ExitCode, RunnerError } from '../../errors.js';
import { findRun, withRunStore } from '../../store/run-history.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { terminalFilterKeepingColors } from '../../terminal-text.js';

/**
 * `runner logs ID [APP]`: what the run's apps wrote to stderr (secrets
 * masked when it was captured), one app or all of them with a header each;
 * on a terminal, with what would steer it escaped (colors kept).
 */
export async function logsCommand(id: string, app: string | undefined, options: GlobalOptions, io: CliIO): Promise<number> {
  const config = await loadHistorySettings({ configPath: options.config, cwd: io.cwd, env: io.env });
  const run = await withRunStore(config, (store) => findRun(store, config.artifacts, id).run);
  const folder = join(run.dir, 'logs');
  const available = existsSync(folder) ? readdirSync(folder).filter((name) => name.endsWith('.log')).map((name) => name.slice(0, -4)).sort() : [];
  if (available.length === 0) {
    const where = run.trigger.type === 'manual' ? '' : ` (runs started by \`runner serve\`, \`watch\` or \`cron\` share their apps: see ${join(config.artifacts, '.runner', 'logs')})`;
    throw new RunnerError('not-found', `run ${run.id} has no app logs${where}`);
  }
  const apps = app === undefined ? available : [app];
  if (app !== undefined && !available.includes(app)) {
    throw new RunnerError('not-found', `run ${run.id} has no log of app \`${app}\``, { hint: `logs of this run: ${available.join(', ')}` });
  }
  for (const name of apps) {
    if (apps.length > 1) io.stdout(`==> ${name} <==\n`);
    // On a terminal, what the app wrote cannot steer it: control characters show escaped, colors stay.
    // Piped or redirected, the log goes out as it was written.
    const filter = io.stdoutIsTTY ? terminalFilterKeepingColors() : undefined;
    for await (const chunk of createReadStream(join(folder, `${name}.log`), 'utf8')) io.stdout(filter ? filter.write(chunk as string) : (chunk as string));
    if (filter) io.stdout(filter.end());
  }
  return ExitCode.succeeded;
}
