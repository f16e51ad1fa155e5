// `runner auth login` in tests: the test plays the browser. It reads the
// authorization URL the CLI prints and follows the authorization server's
// redirect to the CLI's 127.0.0.1 port. The login runs in the test's process:
// nothing in it needs a process of its own.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { StoredDpopKey } from '../../src/auth/dpop.js';
import { runInProcess } from './in-process.js';
import type { CliResult, Workspace } from './workspace.js';

/**
 * `runner auth login APP` in this process (see in-process.ts), with the test as the browser: fetch the
 * URL it prints, follow the redirect to its 127.0.0.1 listener. The login ends when that request arrives.
 */
export async function login(ws: Workspace, env: NodeJS.ProcessEnv, appName = 'notes', extra: string[] = []): Promise<CliResult & { authorizationUrl: URL }> {
  let authorizationUrl: URL | undefined;
  let browser: Promise<void> | undefined;
  const result = await runInProcess(['--config', ws.config, 'auth', 'login', appName, '--no-browser', ...extra], {
    cwd: ws.dir,
    env,
    onStderr: (stderr) => {
      const match = /(http:\/\/127\.0\.0\.1:\d+\/authorize\S+)/.exec(stderr);
      if (match && !authorizationUrl) {
        authorizationUrl = new URL(match[1]!);
        browser = playBrowser(authorizationUrl);
      }
    },
  });
  await browser;
  if (!authorizationUrl) throw new Error(`login printed no URL (exit ${result.code}): ${result.stderr}`);
  return { ...result, authorizationUrl };
}

async function playBrowser(authorizationUrl: URL): Promise<void> {
  const consent = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(consent.status).toBe(302);
  const callback = await fetch(consent.headers.get('location')!);
  await callback.text();
}

/** The per-user credentials file as the tests read it. */
export function readCredentials(file: string) {
  return JSON.parse(readFileSync(file, 'utf8')) as { servers: Record<string, Record<string, { tokens?: { access_token: string; refresh_token?: string; scope?: string; token_type?: string }; client?: { client_id: string }; dpopKey?: StoredDpopKey }>> };
}

