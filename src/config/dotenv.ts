import { join } from 'node:path';
import { parse } from 'dotenv';
import { throwOnDiagnostics, type Diagnostic } from '../errors.js';
import { readSourceFile } from './yaml-source.js';

/** The file beside runner.config.yaml whose variables `${VAR}` in the config can use. */
export const DOTENV_FILE_NAME = '.env';

/**
 * The environment the config expands `${VAR}` from and reads secret values
 * from: `env` over the variables of `<dir>/.env`, so a variable set in the
 * real environment wins. The file is parsed only: process.env is never
 * changed, so nothing leaks into the apps' environments (they get a variable
 * only through their `env:`) or into other configs loaded by the same
 * process. No file: `env` as it is.
 */
export async function withDotenv(dir: string, env: NodeJS.ProcessEnv, shownAs: (file: string) => string): Promise<NodeJS.ProcessEnv> {
  const file = join(dir, DOTENV_FILE_NAME);
  const diagnostics: Diagnostic[] = [];
  let text: string | undefined;
  try {
    text = await readSourceFile(file, shownAs(file), diagnostics, { kind: '.env files', hint: 'a .env file holds a few variables, one per line' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return env;
    throwOnDiagnostics('config', [{ message: `cannot read \`${shownAs(file)}\`: ${code ?? (error as Error).message}` }]);
  }
  throwOnDiagnostics('config', diagnostics);
  return { ...parse(text!), ...env };
}
