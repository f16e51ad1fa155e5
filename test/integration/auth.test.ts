import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthServer, type AuthServer } from '../servers/auth-server.js';
import { startProtectedApp, type ProtectedApp } from '../servers/protected-app.js';
import { login, readCredentials } from '../helpers/auth-login.js';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, type Workspace } from '../helpers/workspace.js';

// The CLI against a real authorization server and a protected MCP server
// on loopback. The test plays the browser: it reads the authorization URL the
// CLI prints, follows the server's redirect to the CLI's 127.0.0.1 port.

let authServer: AuthServer;
let app: ProtectedApp;
// The key of client `m2m-jwt`, which authenticates with a signed JWT (private_key_jwt).
const jwtKeys = generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });

beforeAll(async () => {
  authServer = await startAuthServer({
    clients: [
      { id: 'm2m', secret: 'm2m-secret-value-42', scopes: ['notes.read', 'notes.write'] },
      { id: 'm2m-jwt', publicKey: jwtKeys.publicKey, scopes: ['notes.read'] },
    ],
  });
  app = await startProtectedApp(authServer);
  authServer.addStaticToken('static-bearer-token-0123456789', ['notes.read'], app.url);
});

afterAll(async () => {
  await app?.close();
  await authServer?.close();
});

/** A workspace whose config has app `notes` at the protected server with the given `auth:` YAML, and its own credentials file. */
function notesWorkspace(auth: string, url = app.url): { ws: Workspace; env: NodeJS.ProcessEnv; credentials: string } {
  const ws = createWorkspace(`apps:\n  notes:\n    url: ${url}\n${auth ? `    auth: ${auth}\n` : ''}`);
  ws.write('whoami.yaml', 'name: whoami\nsteps:\n  - id: me\n    uses: notes.whoami\n');
  ws.write('write.yaml', 'name: write\nsteps:\n  - id: note\n    uses: notes.write_note\n    with: { text: hello }\n');
  const credentials = join(mkdtempSync(join(tmpdir(), 'runner-credentials-')), 'credentials.json');
  return { ws, env: { RUNNER_CREDENTIALS: credentials }, credentials };
}

function run(ws: Workspace, env: NodeJS.ProcessEnv, workflow = 'whoami.yaml') {
  return runInProcess(['--config', ws.config, 'run', join(ws.dir, workflow), '--json'], { cwd: ws.dir, env });
}

/** Every file under `dir`, as text. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((file) => statSync(file).isFile())
    .map((file) => readFileSync(file, 'latin1'))
    .join('\n');
}

describe('runner auth login (oauth: authorization code with PKCE)', () => {
  it('registers a client, sends PKCE and the resource indicator, stores tokens in a 0600 file keyed by URL and app', async () => {
    const { ws, env, credentials } = notesWorkspace('{ type: oauth, scopes: [notes.read] }');
    const result = await login(ws, env);
    expect(result.stderr).toContain('open this URL in a browser');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Logged in to app `notes` (scopes: notes.read');
    expect(result.authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(result.authorizationUrl.searchParams.get('resource')).toBe(app.url);
    expect(result.authorizationUrl.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);

    expect(statSync(credentials).mode & 0o777).toBe(0o600);
    const stored = readCredentials(credentials).servers[app.url]!.notes!;
    expect(stored.tokens?.scope).toBe('notes.read');
    expect(stored.tokens?.refresh_token).toBeTruthy();
    expect(authServer.log.registrations.some((r) => r.clientId === stored.client?.client_id && r.method === 'none')).toBe(true);
    const token = stored.tokens!.access_token;
    expect(result.stdout + result.stderr).not.toContain(token);

    const status = await runInProcess(['--config', ws.config, 'auth', 'status'], { cwd: ws.dir, env });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/notes\s+oauth\s+logged in; scopes: notes.read; expires in/);
    expect(status.stdout).toContain(credentials);
    expect(status.stdout).not.toContain(token);
    expect(status.stdout).not.toContain(stored.tokens!.refresh_token!);
  });

  it('runs with the stored token; the token is masked in the record, run.json and output, and is never under artifacts', async () => {
    const { ws, env, credentials } = notesWorkspace('{ type: oauth }');
    expect((await login(ws, env)).code).toBe(0);
    const token = readCredentials(credentials).servers[app.url]!.notes!.tokens!.access_token;
    const result = await run(ws, env);
    expect(result.stderr).not.toContain(token);
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record.steps[0].text).toContain('token ***');
    expect(result.stdout).not.toContain(token);
    expect(app.seenTokens).toContain(token);
    expect(allText(ws.artifacts)).not.toContain(token);
    expect(readFileSync(join(record.dir, 'run.json'), 'utf8')).toContain('token ***');
  });

  it('refreshes an expired access token by itself and saves the new tokens', async () => {
    const { ws, env, credentials } = notesWorkspace('{ type: oauth }');
    expect((await login(ws, env)).code).toBe(0);
    const before = readCredentials(credentials).servers[app.url]!.notes!.tokens!;
    authServer.expireAccessTokens();
    const refreshes = authServer.log.tokenRequests.filter((r) => r.grantType === 'refresh_token').length;
    const result = await run(ws, env);
    expect(result.code).toBe(0);
    const after = readCredentials(credentials).servers[app.url]!.notes!.tokens!;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(authServer.log.tokenRequests.filter((r) => r.grantType === 'refresh_token' && !r.error).length).toBe(refreshes + 1);
    expect(authServer.log.tokenRequests.at(-1)?.resource).toBe(app.url);
    expect(statSync(credentials).mode & 0o777).toBe(0o600);
  });

  it('fails the steps of an app whose login was revoked as unavailable, with the login hint, exit 1', async () => {
    const { ws, env, credentials } = notesWorkspace('{ type: oauth }');
    expect((await login(ws, env)).code).toBe(0);
    const { refresh_token } = readCredentials(credentials).servers[app.url]!.notes!.tokens!;
    await fetch(`${authServer.issuer}/revoke`, { method: 'POST', body: new URLSearchParams({ token: refresh_token! }) });
    const result = await run(ws, env);
    expect(result.code).toBe(1);
    const error = JSON.parse(result.stdout).steps[0].error;
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain('run `runner auth login notes`');
    expect(error.message).toContain('rejected');
    expect(result.stdout + result.stderr).not.toContain('is the server running?');
    const status = await runInProcess(['--config', ws.config, 'auth', 'status', 'notes'], { cwd: ws.dir, env });
    expect(status.stdout).toContain('not logged in');
  });

  it('steps up: a tool that needs a wider scope fails naming it, and the next login asks for it', async () => {
    const { ws, env } = notesWorkspace('{ type: oauth, scopes: [notes.read] }');
    expect((await login(ws, env)).code).toBe(0);
    const denied = await run(ws, env, 'write.yaml');
    expect(denied.code).toBe(1);
    const error = JSON.parse(denied.stdout).steps[0].error;
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain('needs scope `notes.write`');
    expect(error.message).toContain('runner auth login notes');
    const status = await runInProcess(['--config', ws.config, 'auth', 'status', 'notes'], { cwd: ws.dir, env });
    expect(status.stdout).toContain('a server asked for scope notes.write');

    const registrations = authServer.log.registrations.length;
    const again = await login(ws, env);
    expect(again.code).toBe(0);
    // Back on the port its client was registered with: no second registration.
    expect(authServer.log.registrations.length).toBe(registrations);
    expect(again.authorizationUrl.searchParams.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['notes.read', 'notes.write']));
    const allowed = await run(ws, env, 'write.yaml');
    expect(allowed.code).toBe(0);
    expect(JSON.parse(allowed.stdout).steps[0].text).toBe('saved: hello');
  });

  it('in a run with no login, fails as unavailable with the hint, registers no client, and logout forgets a login', async () => {
    const { ws, env } = notesWorkspace('{ type: oauth }');
    const registrations = authServer.log.registrations.length;
    const result = await run(ws, env);
    expect(result.code).toBe(1);
    const error = JSON.parse(result.stdout).steps[0].error;
    expect(error.kind).toBe('unavailable');
    expect(error.message).toBe(`app \`notes\` is not logged in (no token for ${app.url} in ${env.RUNNER_CREDENTIALS}); run \`runner auth login notes\``);
    expect(authServer.log.registrations.length).toBe(registrations);

    expect((await login(ws, env)).code).toBe(0);
    const logout = await runInProcess(['--config', ws.config, 'auth', 'logout', 'notes'], { cwd: ws.dir, env });
    expect(logout.code).toBe(0);
    expect(logout.stdout).toContain('Logged out of app `notes`');
    expect(readCredentials(env.RUNNER_CREDENTIALS!).servers[app.url]).toBeUndefined();
    expect((await run(ws, env)).code).toBe(1);
  });
});

describe('runner auth login follows the 401 challenge', () => {
  let challenging: ProtectedApp;

  beforeAll(async () => {
    // Metadata only where the challenge says (no well-known path), a scope named in the challenge,
    // and, as in the suite's step-up scenario, no challenge before the request after `initialize`.
    challenging = await startProtectedApp(authServer, { metadataPath: '/custom/notes-metadata', challengeScope: 'notes.read', openInitialize: true });
  });

  afterAll(async () => {
    await challenging?.close();
  });

  it('finds the metadata the challenge names, asks for its scope, and on step-up keeps the scope granted before', async () => {
    const { ws, env } = notesWorkspace('{ type: oauth }', challenging.url);
    const first = await login(ws, env);
    expect(first.code).toBe(0);
    expect(first.authorizationUrl.searchParams.get('scope')).toBe('notes.read');
    expect(first.authorizationUrl.searchParams.get('resource')).toBe(challenging.url);
    expect((await run(ws, env)).code).toBe(0);

    const denied = await run(ws, env, 'write.yaml');
    expect(JSON.parse(denied.stdout).steps[0].error.message).toContain('needs scope `notes.write`');
    const again = await login(ws, env);
    expect(again.code).toBe(0);
    expect(again.authorizationUrl.searchParams.get('scope')?.split(' ').sort()).toEqual(['notes.read', 'notes.write']);
    expect((await run(ws, env, 'write.yaml')).code).toBe(0);
  });
});

describe('auth: client-credentials and bearer', () => {
  it('gets a token with the client id and secret; the secret and the token never show', async () => {
    const { ws, env } = notesWorkspace('{ type: client-credentials, client-id: m2m, client-secret: "${M2M_SECRET}", scopes: [notes.read] }');
    const result = await run(ws, { ...env, M2M_SECRET: 'm2m-secret-value-42' });
    expect(result.stderr).toBe(result.stderr.replace('m2m-secret-value-42', ''));
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record.steps[0].text).toMatch(/^client m2m with scopes notes.read; token \*\*\*$/);
    const grant = authServer.log.tokenRequests.filter((r) => r.grantType === 'client_credentials').at(-1);
    expect(grant).toMatchObject({ clientId: 'm2m', scope: 'notes.read', resource: app.url });
    expect(allText(ws.artifacts)).not.toContain('m2m-secret-value-42');
  });

  it('authenticates the client with a JWT signed by its private key (private_key_jwt), the key never shown', async () => {
    const { ws, env } = notesWorkspace('{ type: client-credentials, client-id: m2m-jwt, private-key: "${M2M_KEY}", scopes: [notes.read] }');
    const result = await run(ws, { ...env, M2M_KEY: jwtKeys.privateKey });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).steps[0].text).toMatch(/^client m2m-jwt with scopes notes.read; token \*\*\*$/);
    const grant = authServer.log.tokenRequests.filter((r) => r.grantType === 'client_credentials').at(-1);
    expect(grant).toMatchObject({ clientId: 'm2m-jwt', assertionAlg: 'ES256' });
    const keyLine = jwtKeys.privateKey.split('\n')[1]!;
    expect(result.stdout + result.stderr + allText(ws.artifacts)).not.toContain(keyLine);
  });

  it('steps up a client-credentials token to the scope a tool asks for', async () => {
    const { ws, env } = notesWorkspace('{ type: client-credentials, client-id: m2m, client-secret: "${M2M_SECRET}", scopes: [notes.read] }');
    const result = await run(ws, { ...env, M2M_SECRET: 'm2m-secret-value-42' }, 'write.yaml');
    expect(result.code).toBe(0);
    expect(authServer.log.tokenRequests.filter((r) => r.grantType === 'client_credentials').at(-1)?.scope?.split(' ')).toEqual(['notes.read', 'notes.write']);
  });

  it('sends a bearer token from the environment, masked in the record', async () => {
    const { ws, env } = notesWorkspace('{ type: bearer, token: "${NOTES_TOKEN}" }');
    const result = await run(ws, { ...env, NOTES_TOKEN: 'static-bearer-token-0123456789' });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).steps[0].text).toBe('client static with scopes notes.read; token ***');
    expect(allText(ws.artifacts)).not.toContain('static-bearer-token-0123456789');
  });

  it('reports a rejected bearer token and a missing `auth:` as HTTP 401, never as "is the server running?"', async () => {
    const wrong = notesWorkspace('{ type: bearer, token: "${NOTES_TOKEN}" }');
    const rejected = await run(wrong.ws, { ...wrong.env, NOTES_TOKEN: 'not-a-valid-token' });
    expect(rejected.code).toBe(1);
    const error = JSON.parse(rejected.stdout).steps[0].error;
    expect(error).toMatchObject({ kind: 'unavailable' });
    expect(error.message).toContain('requires authorization (HTTP 401)');
    expect(error.message).toContain('rejected the token in `auth.token`');
    expect(rejected.stdout + rejected.stderr).not.toContain('is the server running?');

    const none = notesWorkspace('');
    const unauthorized = await run(none.ws, none.env);
    expect(unauthorized.code).toBe(1);
    const message = JSON.parse(unauthorized.stdout).steps[0].error.message as string;
    expect(message).toContain('HTTP 401');
    expect(message).toContain('give app `notes` an `auth:`');
    expect(message).not.toContain('is the server running?');
  });
});
