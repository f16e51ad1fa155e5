import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, InsufficientScopeError, SdkErrorCode, SdkHttpError, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError, classifyAuthFailure, LoginRequiredError } from '../../src/auth/auth-errors.js';
import { CredentialsFile } from '../../src/auth/credentials-file.js';
import { loginApp, type OAuthApp } from '../../src/auth/login.js';
import { createTransportAuth } from '../../src/auth/transport-auth.js';
import type { SecretEntry } from '../../src/config/types.js';
import { startAuthServer, type AuthServer } from '../servers/auth-server.js';
import { startProtectedApp, type ProtectedApp } from '../servers/protected-app.js';

let authServer: AuthServer;
let app: ProtectedApp;

beforeAll(async () => {
  authServer = await startAuthServer();
  app = await startProtectedApp(authServer);
});

afterAll(async () => {
  await app?.close();
  await authServer?.close();
});

function oauthApp(scopes: string[] = []): OAuthApp {
  return { name: 'notes', url: app.url, auth: { type: 'oauth', scopes, dpop: 'auto', credentialsFile: join(mkdtempSync(join(tmpdir(), 'runner-provider-')), 'credentials.json') } };
}

/** Logs in as `runner auth login` does, the test following the redirect as a browser would. */
async function logIn(target: OAuthApp) {
  return loginApp(target, {
    timeoutMs: 10_000,
    onAuthorizationUrl: (url) => {
      void fetch(url, { redirect: 'manual' }).then((consent) => fetch(consent.headers.get('location')!));
    },
  });
}

async function connect(target: OAuthApp, secrets: { values: string[]; entries: SecretEntry[] }) {
  const client = new Client({ name: 'test', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(target.url), { ...createTransportAuth(target, fetch, { secretValues: secrets.values, secretEntries: secrets.entries }), onInsufficientScope: 'throw' });
  await client.connect(transport);
  return client;
}

describe('the stored-token provider against a real authorization server', () => {
  it('refreshes once for many calls that meet an expired token at the same time', async () => {
    const target = oauthApp();
    await logIn(target);
    const secrets = { values: ['short'], entries: [] as SecretEntry[] };
    const client = await connect(target, secrets);
    try {
      const { access_token } = (await new CredentialsFile(target.auth.credentialsFile).read(app.url, 'notes'))!.tokens!;
      // Token values are learned as secrets the moment they are read, longest first.
      expect(secrets.values).toEqual([expect.any(String), expect.any(String), 'short']);
      expect(secrets.values).toContain(access_token);
      expect(secrets.entries).toContainEqual({ name: 'RUNNER_AUTH_NOTES_TOKEN', value: access_token });

      authServer.expireAccessTokens();
      const before = authServer.log.tokenRequests.filter((r) => r.grantType === 'refresh_token').length;
      const results = await Promise.all(Array.from({ length: 8 }, () => client.callTool({ name: 'whoami', arguments: {} })));
      expect(results.every((result) => !result.isError)).toBe(true);
      expect(authServer.log.tokenRequests.filter((r) => r.grantType === 'refresh_token').length).toBe(before + 1);
      const refreshed = (await new CredentialsFile(target.auth.credentialsFile).read(app.url, 'notes'))!.tokens!.access_token;
      expect(refreshed).not.toBe(access_token);
      expect(secrets.values).toContain(refreshed);
    } finally {
      await client.close();
    }
  });

  it('fails at connect with LoginRequiredError, sending nothing, when no login is stored', async () => {
    const target = oauthApp();
    const seen = app.seenTokens.length;
    const registrations = authServer.log.registrations.length;
    const error = await connect(target, { values: [], entries: [] }).catch((e: unknown) => e);
    expect(classifyAuthFailure(error, target)?.message).toBe(
      `app \`notes\` is not logged in (no token for ${app.url} in ${target.auth.credentialsFile}); run \`runner auth login notes\``,
    );
    expect(app.seenTokens.length).toBe(seen);
    expect(authServer.log.registrations.length).toBe(registrations);
  });

  it('remembers the scope of an insufficient_scope challenge for the next login', async () => {
    const target = oauthApp(['notes.read']);
    await logIn(target);
    const client = await connect(target, { values: [], entries: [] });
    try {
      const error = await client.callTool({ name: 'write_note', arguments: { text: 'x' } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InsufficientScopeError);
      expect(classifyAuthFailure(error, target)?.message).toBe(
        'app `notes` needs scope `notes.write`, which its stored login does not grant (HTTP 403 insufficient_scope); run `runner auth login notes` to grant it',
      );
      expect((await new CredentialsFile(target.auth.credentialsFile).read(app.url, 'notes'))?.stepUpScope).toBe('notes.write');
    } finally {
      await client.close();
    }
    const again = await logIn(target);
    expect(again.tokens?.scope).toBe('notes.read notes.write');
  });
});

describe('classifyAuthFailure', () => {
  const none = { name: 'notes' };
  const bearer = { name: 'notes', auth: { type: 'bearer' as const, token: 't' } };

  it('turns 401s, 403s and missing logins into unavailable, not-sent AuthErrors that say what to do', () => {
    const unauthorized = classifyAuthFailure(new UnauthorizedError(), bearer)!;
    expect(unauthorized).toBeInstanceOf(AuthError);
    expect(unauthorized).toMatchObject({ kind: 'unavailable', outcome: 'not-sent', name: 'CallError' });
    expect(unauthorized.message).toBe('app `notes` requires authorization (HTTP 401); the server rejected the token in `auth.token` of app `notes`');
    const forbidden = new SdkHttpError(SdkErrorCode.ClientHttpForbidden, 'Version negotiation failed: the server denied access (HTTP 403)', { status: 403 });
    expect(classifyAuthFailure(forbidden, none)!.message).toContain('app `notes` denied access (HTTP 403); give app `notes` an `auth:`');
    const wrapped = new Error('connect failed', { cause: new LoginRequiredError('rejected', 'has a stored login the authorization server rejected') });
    expect(classifyAuthFailure(wrapped, none)!.message).toBe('app `notes` has a stored login the authorization server rejected; run `runner auth login notes`');
    const stepUpLimit = new SdkHttpError(SdkErrorCode.ClientHttpForbidden, 'retry limit', { status: 403, text: '{"error":"insufficient_scope"}' });
    expect(classifyAuthFailure(stepUpLimit, bearer)!.message).toBe('app `notes` needs a wider scope, which its bearer token does not grant (HTTP 403 insufficient_scope)');
  });

  it('leaves other failures alone', () => {
    expect(classifyAuthFailure(new Error('fetch failed', { cause: new Error('connect ECONNREFUSED') }), none)).toBeUndefined();
    expect(classifyAuthFailure(new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'Error POSTing', { status: 500 }), none)).toBeUndefined();
  });
});
