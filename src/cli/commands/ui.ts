import { loadHistorySettings } from '../../config/history-settings.js';
import { ExitCode, RunnerError } from '../../errors.js';
import { openRunStore } from '../../store/run-history.js';
import { startUi } from '../../ui/ui-server.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { onStopSignals } from '../stop-signals.js';

export interface UiCommandOptions extends GlobalOptions {
  port?: string;
  host?: string;
  allowActions?: boolean;
}

const DEFAULT_PORT = 8787;
const LOOPBACK = '127.0.0.1';

/**
 * `runner ui [--port N]`: the runs and their reports in a browser, served on
 * 127.0.0.1 until SIGINT or SIGTERM. Read-only unless `--allow-actions`.
 * Another interface only with `--host`, and then with a warning: anyone who
 * reaches it sees the runs (and with actions, can start them).
 */
export async function uiCommand(options: UiCommandOptions, io: CliIO): Promise<number> {
  const port = options.port === undefined ? DEFAULT_PORT : Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RunnerError('usage', `\`--port\`: expected a port number from 0 to 65535, got \`${options.port}\``);
  const host = options.host ?? LOOPBACK;
  const settings = await loadHistorySettings({ configPath: options.config, cwd: io.cwd, env: io.env });
  const store = openRunStore(settings);
  let ui;
  try {
    ui = await startUi({ store, artifacts: settings.artifacts, configDir: settings.dir, ...(options.config && { configPath: options.config }), allowActions: Boolean(options.allowActions), host, port });
  } catch (error) {
    store.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new RunnerError('usage', `port ${port} on ${host} is taken`, { hint: 'give another with --port N, or --port 0 for any free one' });
    throw error;
  }
  if (host !== LOOPBACK && host !== 'localhost' && host !== '::1') {
    io.stderr(`warning: serving on ${host}, not only this machine: anyone who can reach it sees every run${options.allowActions ? ', and can resume and start runs' : ''}\n`);
  }
  // The handlers go in before the address is printed: whoever reads it may signal at once.
  const stopped = new Promise<void>((resolve) => onStopSignals((_signal, count) => (count === 1 ? resolve() : process.exit(ExitCode.interrupted))));
  io.stderr(`runner ui: ${ui.url}/ (${options.allowActions ? 'actions on: resume and run now, from its own pages only' : 'read-only'}; Ctrl-C stops it)\n`);
  io.stdout(`${ui.url}/\n`);
  await stopped;
  await ui.close();
  store.close();
  return ExitCode.succeeded;
}
