// `runner auth login` in tests: the test plays the browser. It reads the
// authorization URL the CLI prints and follows the authorization server's
// redirect to the CLI's 127.0.0.1 port. The login runs in the test's process:
// nothing in it needs a process of its own.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { expect } from 'vitest';
import type { StoredDpopKey } from '../../src/auth/dpop.js';
import { runCli as runProgram } from '../../dist/cli/program.js';
import type { CliResult, Workspace } from './workspace.js';

/**
 * `runner auth login APP` in this process (see in-process.ts), with the test as the browser: fetch the
 * URL it prints, follow the redirect to its 127.0.0.1 listener. The login ends when that request arrives.
 */
export async function login(ws: Workspace, env: NodeJS.ProcessEnv, appName = 'notes', extra: string[] = []): Promise<CliResult & { authorizationUrl: URL }> {
  let stdout = '';
  let stderr = '';
  let authorizationUrl: URL | undefined;
  let browser: Promise<void> | undefined;
  const code = await runProgram(['--config', ws.config, 'auth', 'login', appName, '--no-browser', ...extra], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => {
      stderr += text;
      const match = /(http:\/\/127\.0\.0\.1:\d+\/authorize\S+)/.exec(stderr);
      if (match && !authorizationUrl) {
        authorizationUrl = new URL(match[1]!);
        browser = playBrowser(authorizationUrl);
      }
    },
    stdin: Readable.from([]),
    stderrIsTTY: false,
    cwd: ws.dir,
    env: { ...process.env, ...env },
  });
  await browser;
  if (!authorizationUrl) throw new Error(`login printed no URL (exit ${code}): ${stderr}`);
  return { code, signal: null, stdout, stderr, authorizationUrl };
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

