import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { RunnerError } from '../errors.js';

/** The config file name looked for in the working folder and its parents. */
export const CONFIG_FILE_NAME = 'runner.config.yaml';

export interface LoadConfigOptions {
  /** `--config PATH`, relative to `cwd`. */
  configPath?: string;
  cwd: string;
  /** Environment ${VAR} expands from and secret values come from. */
  env: NodeJS.ProcessEnv;
}

/**
 * Finds the config file: `configPath` when given (it must exist), else
 * runner.config.yaml in `cwd` or the nearest parent folder; null when none.
 */
export async function findConfigFile(options: { configPath?: string; cwd: string }): Promise<string | null> {
  if (options.configPath !== undefined) {
    const file = resolve(options.cwd, options.configPath);
    if (!(await isFile(file))) {
      throw new RunnerError('not-found', `config file \`${options.configPath}\` does not exist`, {
        hint: `looked for ${file}`,
      });
    }
    return file;
  }
  for (let dir = resolve(options.cwd); ; dir = dirname(dir)) {
    const file = join(dir, CONFIG_FILE_NAME);
    if (await isFile(file)) return file;
    if (dirname(dir) === dir) return null;
  }
}


async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
