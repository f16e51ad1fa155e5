import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** The environment variable that names the credentials file, over every default. */
export const CREDENTIALS_ENV = 'RUNNER_CREDENTIALS';

/**
 * Where OAuth tokens and client registrations live: `$RUNNER_CREDENTIALS`
 * (relative to `dir`), else `$XDG_CONFIG_HOME/runner/credentials.json`, else
 * `~/.config/runner/credentials.json`. Per user, never under artifacts.
 */
export function credentialsFilePath(env: NodeJS.ProcessEnv, dir: string): string {
  const named = env[CREDENTIALS_ENV];
  if (named) return resolve(dir, named);
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const xdg = env.XDG_CONFIG_HOME;
  const configHome = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(configHome, 'runner', 'credentials.json');
}
