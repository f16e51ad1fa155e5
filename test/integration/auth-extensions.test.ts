import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, readCredentials } from '../helpers/auth-login.js';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, type Workspace } from '../helpers/workspace.js';
import { startAuthServer, type AuthServer } from '../servers/auth-server.js';
import { startIdentityProvider, type IdentityProvider } from '../servers/identity-provider.js';
import { startProtectedApp, type ProtectedApp } from '../servers/protected-app.js';

// The auth extensions with the CLI against real servers on loopback: an
// authorization server that binds tokens with DPoP and takes JWT-bearer
// grants, protected MCP servers that demand DPoP (one with a nonce), and an
// enterprise identity provider that exchanges ID tokens for ID-JAGs.

const WORKLOAD_ISSUER = 'https://kubernetes.default.svc';
let authServer: AuthServer;
let idp: IdentityProvider;
let workloadKey: CryptoKey;
let dpopApp: ProtectedApp;
let nonceApp: ProtectedApp;
let plainApp: ProtectedApp;

beforeAll(async () => {
  const workload = await generateKeyPair('ES256');
  workloadKey = workload.privateKey;
  idp = await startIdentityProvider({ mcpClientId: 'runner-at-notes' });
  authServer = await startAuthServer({
    dpop: true,
    clients: [
      { id: 'm2m', secret: 'm2m-secret-value-42', scopes: ['notes.read', 'notes.write'] },
      { id: 'builder', scopes: ['notes.read'] },
      { id: 'runner-at-notes', secret: 'notes-client-secret-7', scopes: ['notes.read', 'notes.write'] },
    ],
    assertionIssuers: [
      { issuer: WORKLOAD_ISSUER, publicKey: await exportSPKI(workload.publicKey), kind: 'workload' },
      { issuer: idp.issuer, publicKey: idp.publicKey, kind: 'id-jag' },
    ],
  });
  dpopApp = await startProtectedApp(authServer, { dpop: true });
  nonceApp = await startProtectedApp(authServer, { dpop: true, dpopNonce: 'server-nonce-1' });
  plainApp = await startProtectedApp(authServer);
});

afterAll(async () => {
  await Promise.all([dpopApp?.close(), nonceApp?.close(), plainApp?.close()]);
  await authServer?.close();
  await idp?.close();
});

/** A workspace with app `notes` at `url` with the given `auth:` YAML, a whoami workflow, and its own credentials file. */
function notesWorkspace(url: string, auth: string, extraEnv: NodeJS.ProcessEnv = {}): { ws: Workspace; env: NodeJS.ProcessEnv; credentials: string } {
  const ws = createWorkspace(`apps:\n  notes:\n    url: ${url}\n    auth: ${auth}\n`);
  ws.write('whoami.yaml', 'name: whoami\nsteps:\n  - id: me\n    uses: notes.whoami\n');
  const credentials = join(mkdtempSync(join(tmpdir(), 'runner-credentials-')), 'credentials.json');
  return { ws, env: { RUNNER_CREDENTIALS: credentials, ...extraEnv }, credentials };
}

function run(ws: Workspace, env: NodeJS.ProcessEnv) {
  return runInProcess(['--config', ws.config, 'run', join(ws.dir, 'whoami.yaml'), '--json'], { cwd: ws.dir, env });
}

/** A JWT the workload's platform would issue (a projected service account token), for the authorization server. */
function workloadJwt(expiresIn = '10m'): Promise<string> {
  return new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setIssuer(WORKLOAD_ISSUER).setSubject('system:serviceaccount:ci:builder').setAudience(authServer.issuer).setIssuedAt().setExpirationTime(expiresIn).sign(workloadKey);
}

describe('DPoP (auth.dpop, default auto)', () => {
  it('oauth: a login against a server that challenges with DPoP binds the tokens to a stored key; runs and refreshes prove it', async () => {
    const { ws, env, credentials } = notesWorkspace(dpopApp.url, '{ type: oauth, scopes: [notes.read] }');
    const result = await login(ws, env);
    expect(result.code).toBe(0);
    const stored = readCredentials(credentials).servers[dpopApp.url]!.notes!;
    expect(stored.tokens?.token_type).toBe('DPoP');
    expect(stored.dpopKey?.thumbprint).toBeTruthy();
    expect(authServer.log.tokenRequests.at(-1)).toMatchObject({ grantType: 'authorization_code', dpopJkt: stored.dpopKey!.thumbprint });

    const first = await run(ws, env);
    expect(first.code, first.stderr).toBe(0);
    expect(dpopApp.schemes.at(-1)).toBe('DPoP');
    expect(dpopApp.proofs.at(-1)?.jkt).toBe(stored.dpopKey!.thumbprint);
    const jtis = dpopApp.proofs.map((proof) => proof.jti);
    expect(new Set(jtis).size).toBe(jtis.length);

    // An expired access token is refreshed with a proof of the same key, in a process that did not log in.
    authServer.expireAccessTokens();
    const second = await run(ws, env);
    expect(second.code, second.stderr).toBe(0);
    const refresh = authServer.log.tokenRequests.filter((request) => request.grantType === 'refresh_token').at(-1);
    expect(refresh).toMatchObject({ dpopJkt: stored.dpopKey!.thumbprint });
    expect(refresh?.error).toBeUndefined();
    const after = readCredentials(credentials).servers[dpopApp.url]!.notes!;
    expect(after.tokens?.access_token).not.toBe(stored.tokens?.access_token);
    expect(after.dpopKey).toEqual(stored.dpopKey);
  });

  it('oauth with dpop: false asks for Bearer tokens, which a DPoP-only server refuses: unavailable, never "is the server running?"', async () => {
    const { ws, env, credentials } = notesWorkspace(dpopApp.url, '{ type: oauth, dpop: false }');
    expect((await login(ws, env)).code).toBe(0);
    const stored = readCredentials(credentials).servers[dpopApp.url]!.notes!;
    expect(stored.tokens?.token_type).toBe('Bearer');
    expect(stored.dpopKey).toBeUndefined();
    const result = await run(ws, env);
    expect(result.code).toBe(1);
    const error = JSON.parse(result.stdout).steps[0].error;
    expect(error.kind).toBe('unavailable');
    expect(result.stdout + result.stderr).not.toContain('is the server running?');
  });

  it('client-credentials: binds its tokens when the server challenges with DPoP, and answers a nonce challenge', async () => {
    const { ws, env } = notesWorkspace(nonceApp.url, '{ type: client-credentials, client-id: m2m, client-secret: "${M2M_SECRET}" }', { M2M_SECRET: 'm2m-secret-value-42' });
    const before = nonceApp.proofs.length;
    const result = await run(ws, env);
    expect(result.code, result.stderr).toBe(0);
    const request = authServer.log.tokenRequests.filter((entry) => entry.grantType === 'client_credentials').at(-1);
    expect(request?.dpopJkt).toBeTruthy();
    expect(nonceApp.proofs.length).toBeGreaterThan(before);
    expect(nonceApp.proofs.at(-1)?.jkt).toBe(request?.dpopJkt);
    expect(JSON.parse(result.stdout).steps[0].text).toContain('client m2m');
  });

  it('auto stays Bearer where the server does not ask for DPoP', async () => {
    const { ws, env } = notesWorkspace(plainApp.url, '{ type: client-credentials, client-id: m2m, client-secret: "${M2M_SECRET}" }', { M2M_SECRET: 'm2m-secret-value-42' });
    const result = await run(ws, env);
    expect(result.code, result.stderr).toBe(0);
    expect(plainApp.schemes.at(-1)).toBe('Bearer');
    expect(authServer.log.tokenRequests.filter((entry) => entry.grantType === 'client_credentials').at(-1)?.dpopJkt).toBeUndefined();
  });
});

describe('workload-identity (a JWT from the platform, RFC 7523)', () => {
  it('reads the assertion file at each token request, masks the JWT, and fails an expired one as unavailable naming the file', async () => {
    const tokenFile = join(mkdtempSync(join(tmpdir(), 'runner-workload-')), 'token');
    const jwt = await workloadJwt();
    writeFileSync(tokenFile, `${jwt}\n`);
    const { ws, env } = notesWorkspace(plainApp.url, `{ type: workload-identity, client-id: builder, assertion-file: ${tokenFile}, scopes: [notes.read] }`);
    const result = await run(ws, env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).steps[0].text).toContain('client builder with scopes notes.read');
    expect(authServer.log.tokenRequests.at(-1)).toMatchObject({ grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer', clientId: 'builder', assertionSubject: 'system:serviceaccount:ci:builder' });

    // The platform rotated the token to one that has expired: the next run reads it, and says what to check.
    writeFileSync(tokenFile, await workloadJwt('-1m'));
    const expired = await run(ws, env);
    expect(expired.code).toBe(1);
    const error = JSON.parse(expired.stdout).steps[0].error;
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain('invalid_grant');
    expect(error.message).toContain('auth.assertion-file');
    expect(expired.stdout + expired.stderr).not.toContain(jwt);
  });

  it('a missing assertion file fails the step as unavailable, naming the file', async () => {
    const missing = join(tmpdir(), `runner-no-such-token-${process.pid}`);
    const { ws, env } = notesWorkspace(plainApp.url, `{ type: workload-identity, client-id: builder, assertion-file: ${missing} }`);
    const result = await run(ws, env);
    expect(result.code).toBe(1);
    const error = JSON.parse(result.stdout).steps[0].error;
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain(`cannot read \`auth.assertion-file\` ${missing}`);
  });
});

describe('enterprise-managed (ID token → ID-JAG at the identity provider → token)', () => {
  const auth = () =>
    `{ type: enterprise-managed, client-id: runner-at-notes, client-secret: "\${NOTES_SECRET}", idp: "${idp.issuer}", idp-client-id: ${idp.clientId}, id-token: "\${IDP_ID_TOKEN}", scopes: [notes.read] }`;

  it('exchanges the user\'s ID token for a grant naming the authorization server and the resource, then calls with the token', async () => {
    const idToken = await idp.issueIdToken('alice@example.com');
    const { ws, env } = notesWorkspace(plainApp.url, auth(), { NOTES_SECRET: 'notes-client-secret-7', IDP_ID_TOKEN: idToken });
    const result = await run(ws, env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).steps[0].text).toContain('client runner-at-notes with scopes notes.read');
    expect(idp.exchanges.at(-1)).toEqual({ audience: authServer.issuer, resource: plainApp.url, scope: 'notes.read', clientId: idp.clientId });
    expect(authServer.log.tokenRequests.at(-1)).toMatchObject({ grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer', clientId: 'runner-at-notes', assertionSubject: 'alice@example.com' });
    expect(result.stdout + result.stderr).not.toContain(idToken);
  });

  it('an expired ID token fails the step as unavailable, saying the identity provider refused and what to check', async () => {
    const idToken = await idp.issueIdToken('alice@example.com', '-1m');
    const { ws, env } = notesWorkspace(plainApp.url, auth(), { NOTES_SECRET: 'notes-client-secret-7', IDP_ID_TOKEN: idToken });
    const result = await run(ws, env);
    expect(result.code).toBe(1);
    const error = JSON.parse(result.stdout).steps[0].error;
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain(`the identity provider ${idp.issuer} did not exchange the ID token of app \`notes\``);
    expect(error.message).toContain('invalid_grant');
    expect(error.message).toContain('auth.id-token');
  });
});
