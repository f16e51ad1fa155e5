import { Composition } from '../composition.js';
import { loadConfig } from '../config/load.js';
import type { CliIO, GlobalOptions } from './io.js';
import { reportWarnings } from './report-error.js';

/**
 * What a command runs on: the config (from `--config` or the nearest
 * runner.config.yaml up from the current folder), loaded once, its warnings
 * printed on stderr unless `warn` is false, and the parts wired to it.
 * The caller closes it (`await context.close()`) when it is done.
 */
export async function openCommandContext(options: GlobalOptions, io: CliIO, { warn = true }: { warn?: boolean } = {}): Promise<Composition> {
  const config = await loadConfig({ configPath: options.config, cwd: io.cwd, env: io.env });
  if (warn) reportWarnings(config.warnings, io.stderr);
  return new Composition(config, { inProcessApps: io.inProcessApps });
}
