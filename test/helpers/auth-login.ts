// `runner auth login` in tests: the test plays the browser. It reads the
// authorization URL the CLI prints and follows the authorization server's
// redirect to the CLI's 127.0.0.1 port.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { StoredDpopKey } from '../../src/auth/dpop.js';
import { cliPath, type CliResult, type Workspace } from './workspace.js';

/** `runner auth login APP`, with the test as the browser: fetch the printed URL, follow its redirect to the CLI. */
export function login(ws: Workspace, env: NodeJS.ProcessEnv, appName = 'notes', extra: string[] = []): Promise<CliResult & { authorizationUrl: URL }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, '--config', ws.config, 'auth', 'login', appName, '--no-browser', ...extra], {
      cwd: ws.dir,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let authorizationUrl: URL | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const match = /(http:\/\/127\.0\.0\.1:\d+\/authorize\S+)/.exec(stderr);
      if (match && !authorizationUrl) {
        authorizationUrl = new URL(match[1]!);
        void playBrowser(authorizationUrl).catch(reject);
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (!authorizationUrl) return reject(new Error(`login printed no URL (exit ${code}): ${stderr}`));
      resolve({ code, signal, stdout, stderr, authorizationUrl });
    });
  });
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

