import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { credentialsFilePath } from '../../src/auth/credentials-path.js';
import { loadConfig } from '../../src/config/load.js';
import { formatDiagnostic, RunnerError } from '../../src/errors.js';

async function configDir(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'runner-auth-config-'));
  await writeFile(join(dir, 'runner.config.yaml'), text);
  return dir;
}

async function problemsOf(text: string, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const error = await loadConfig({ cwd: await configDir(text), env }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof RunnerError)) throw new Error(`expected a config error, got ${String(error)}`);
  return error.diagnostics.map(formatDiagnostic);
}

const app = (auth: string) => `apps:\n  notes:\n    url: https://notes.example/mcp\n    auth: ${auth}\n`;

describe('auth: in runner.config.yaml', () => {
  it('normalizes each type; oauth says where its per-user credentials file is', async () => {
    const dir = await configDir(
      [
        'apps:',
        '  drive:',
        '    url: https://drive.example/mcp',
        '    auth: { type: oauth, scopes: [files.read, files.read], client-id: runner-cli, redirect-port: 8765 }',
        '  m2m:',
        '    url: https://m2m.example/mcp',
        '    auth: { type: client-credentials, client-id: svc, client-secret: "${SVC_SECRET}", scopes: [jobs.run] }',
        '  notes:',
        '    url: https://notes.example/mcp',
        '    auth: { type: bearer, token: "${NOTES_TOKEN}" }',
        '',
      ].join('\n'),
    );
    const config = await loadConfig({ cwd: dir, env: { HOME: '/home/u', SVC_SECRET: 'svc-secret-value', NOTES_TOKEN: 'notes-token-value' } });
    expect(config.apps.drive).toMatchObject({
      auth: { type: 'oauth', scopes: ['files.read'], clientId: 'runner-cli', redirectPort: 8765, credentialsFile: '/home/u/.config/runner/credentials.json' },
    });
    expect(config.apps.m2m).toMatchObject({ auth: { type: 'client-credentials', clientId: 'svc', clientSecret: 'svc-secret-value', scopes: ['jobs.run'] } });
    expect(config.apps.notes).toMatchObject({ auth: { type: 'bearer', token: 'notes-token-value' } });
    // Masked everywhere without being listed under `secrets`, and kept in the run store by variable name.
    expect(config.secretValues).toEqual(['notes-token-value', 'svc-secret-value']);
    expect(config.secretEntries).toEqual([
      { name: 'NOTES_TOKEN', value: 'notes-token-value' },
      { name: 'SVC_SECRET', value: 'svc-secret-value' },
    ]);
    expect(config.warnings).toEqual([]);
  });

  it('warns about a secret written out in the config, and names it after the app for the run store', async () => {
    const dir = await configDir(app('{ type: bearer, token: literal-token-123 }'));
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config.secretEntries).toEqual([{ name: 'RUNNER_AUTH_NOTES_TOKEN', value: 'literal-token-123' }]);
    expect(config.warnings.map(formatDiagnostic)).toEqual([
      'runner.config.yaml:4:34: app `notes` has its `auth.token` written in the config, where anyone who can read the file can use it\n' +
        '  hint: write it as ${VARIABLE} and set VARIABLE in the environment or in .env beside the config',
    ]);
  });

  it('says which keys a type needs or does not take, at the key', async () => {
    expect(await problemsOf(app('{ type: oauth, token: abc }'))).toEqual([
      'runner.config.yaml:4:26: `token` does not apply to `type: oauth` in `auth` of app `notes`; it belongs with `type: bearer`',
    ]);
    expect(await problemsOf(app('{ type: client-credentials, client-id: svc }'))).toEqual([
      'runner.config.yaml:4:19: `auth` of app `notes` of `type: client-credentials` is missing `client-secret` (or `private-key` for a signed JWT)\n  hint: write the secret or the PEM key as ${VAR} and set VAR in the environment or .env',
    ]);
    expect(await problemsOf(app('{ type: client-credentials, client-id: svc, client-secret: s, private-key: k }'))).toEqual([
      'runner.config.yaml:4:73: `auth` of app `notes` has both `client-secret` and `private-key`; the client authenticates with one of them\n  hint: write the secret or the PEM key as ${VAR} and set VAR in the environment or .env',
    ]);
    expect(await problemsOf(app('{ type: client-credentials, client-id: svc, client-secret: s, algorithm: ES256 }'))).toEqual([
      'runner.config.yaml:4:73: `algorithm` in `auth` of app `notes` signs the JWT of `private-key`, which is not set',
    ]);
    expect(await problemsOf(app('{ type: bearer }'))).toEqual([
      'runner.config.yaml:4:19: `auth` of app `notes` of `type: bearer` is missing `token`\n  hint: write the token as ${VAR} and set VAR in the environment or .env',
    ]);
    expect(await problemsOf(app('{ type: oauth, client-secret: s }'))).toEqual([
      'runner.config.yaml:4:26: `client-secret` in `auth` of app `notes` needs `client-id`: a dynamically registered client gets its secret from the registration',
    ]);
  });

  it('normalizes workload-identity and enterprise-managed: a credential from the config or a file, dpop auto unless set', async () => {
    const dir = await configDir(
      [
        'apps:',
        '  ci:',
        '    url: https://ci.example/mcp',
        '    auth: { type: workload-identity, client-id: builder, assertion-file: tokens/mcp.jwt, dpop: true }',
        '  ci2:',
        '    url: https://ci2.example/mcp',
        '    auth: { type: workload-identity, client-id: builder, assertion: "${WORKLOAD_JWT}" }',
        '  wiki:',
        '    url: https://wiki.example/mcp',
        '    auth:',
        '      type: enterprise-managed',
        '      client-id: runner-at-wiki',
        '      client-secret: ${WIKI_SECRET}',
        '      idp: https://idp.example.com',
        '      idp-client-id: runner',
        '      id-token-file: ~/.cache/idp/id_token',
        '      scopes: [wiki.read]',
        '      dpop: false',
        '',
      ].join('\n'),
    );
    const config = await loadConfig({ cwd: dir, env: { HOME: '/home/u', WORKLOAD_JWT: 'eyJ.workload.jwt', WIKI_SECRET: 'wiki-secret-value' } });
    expect(config.apps.ci).toMatchObject({ auth: { type: 'workload-identity', clientId: 'builder', assertion: { file: join(dir, 'tokens/mcp.jwt') }, scopes: [], dpop: true } });
    expect(config.apps.ci2).toMatchObject({ auth: { type: 'workload-identity', assertion: { value: 'eyJ.workload.jwt' }, dpop: 'auto' } });
    expect(config.apps.wiki).toMatchObject({
      auth: {
        type: 'enterprise-managed',
        clientId: 'runner-at-wiki',
        clientSecret: 'wiki-secret-value',
        idp: { issuer: 'https://idp.example.com' },
        idpClientId: 'runner',
        idToken: { file: '/home/u/.cache/idp/id_token' },
        scopes: ['wiki.read'],
        dpop: false,
      },
    });
    expect(config.secretEntries).toEqual([
      { name: 'WIKI_SECRET', value: 'wiki-secret-value' },
      { name: 'WORKLOAD_JWT', value: 'eyJ.workload.jwt' },
    ]);
  });

  it('says what workload-identity and enterprise-managed are missing, at the key', async () => {
    expect(await problemsOf(app('{ type: workload-identity, client-id: b }'))).toEqual([
      "runner.config.yaml:4:19: `auth` of app `notes` of `type: workload-identity` is missing `assertion` (or `assertion-file`): the workload's JWT\n  hint: write it as ${VAR} and set VAR in the environment, or name the file the platform keeps it in",
    ]);
    expect(await problemsOf(app('{ type: workload-identity, client-id: b, assertion: "${J}", assertion-file: f }'), { J: 'x' })).toEqual([
      "runner.config.yaml:4:71: `auth` of app `notes` has both `assertion` and `assertion-file`; the workload's JWT comes from one of them\n  hint: write it as ${VAR} and set VAR in the environment, or name the file the platform keeps it in",
    ]);
    expect(await problemsOf(app('{ type: enterprise-managed, client-id: c, client-secret: "${S}", idp: not-a-url, idp-client-id: r, id-token: "${T}" }'), { S: 's', T: 't' })).toEqual([
      "runner.config.yaml:4:81: `idp` in `auth` of app `notes` is not an http(s) URL\n  hint: the identity provider's issuer, such as https://idp.example.com",
    ]);
    expect(await problemsOf(app('{ type: enterprise-managed, client-id: c, id-token: "${T}" }'), { T: 't' })).toEqual([
      'runner.config.yaml:4:19: `auth` of app `notes` of `type: enterprise-managed` is missing `client-secret`',
      'runner.config.yaml:4:19: `auth` of app `notes` of `type: enterprise-managed` is missing `idp-client-id`',
      "runner.config.yaml:4:19: `auth` of app `notes` of `type: enterprise-managed` is missing `idp` (the identity provider's issuer URL, or `idp-token-endpoint`)",
    ]);
    expect(await problemsOf(app('{ type: bearer, token: "${T}", dpop: true }'), { T: 't' })).toEqual([
      'runner.config.yaml:4:42: `dpop` does not apply to `type: bearer` in `auth` of app `notes`; it belongs with `type: oauth` or `type: client-credentials` or `type: workload-identity` or `type: enterprise-managed`',
    ]);
    expect(await problemsOf(app('{ type: oauth, dpop: maybe }'))).toEqual([expect.stringContaining('true, false or auto')]);
  });

  it('names a mistyped key, a bad type, port or scope, and `auth` on a stdio app', async () => {
    expect(await problemsOf(app('{ type: oauth, scope: [a] }'))).toEqual([
      'runner.config.yaml:4:26: unknown key `scope` in `auth` of app `notes`\n  hint: did you mean `scopes`? allowed keys: type, scopes, client-id, client-secret, private-key, algorithm, redirect-port, token, dpop, assertion, assertion-file, idp and 5 more',
    ]);
    expect(await problemsOf(app('{ type: oauth2 }'))).toEqual([
      'runner.config.yaml:4:19: `auth.type` of app `notes`: expected one of `oauth`, `client-credentials`, `workload-identity`, `enterprise-managed`, `bearer`, got `oauth2`\n  hint: did you mean `oauth`?',
    ]);
    expect(await problemsOf(app('{ type: oauth, redirect-port: 70000 }'))).toEqual([
      'runner.config.yaml:4:41: `auth.redirect-port` of app `notes`: expected an integer up to 65535, got `70000`',
    ]);
    expect(await problemsOf(app('{ type: oauth, scopes: ["files read"] }'))).toEqual([
      'runner.config.yaml:4:35: `auth.scopes[0]` of app `notes`: expected a scope name without spaces, got `files read`',
    ]);
    expect(await problemsOf('apps:\n  image:\n    command: node\n    auth: { type: oauth }\n')).toEqual([
      'runner.config.yaml:4:5: `auth` applies only to Streamable HTTP apps (with `url`), and app `image` is not one',
    ]);
  });

  it('refuses a credentials file inside the artifacts folder', async () => {
    expect(await problemsOf(app('{ type: oauth }'), { RUNNER_CREDENTIALS: 'artifacts/credentials.json' })).toEqual([
      expect.stringMatching(/^runner\.config\.yaml:4:19: the credentials file \/.*\/artifacts\/credentials\.json \(RUNNER_CREDENTIALS\) is inside the artifacts folder, where tokens are never kept\n  hint: point RUNNER_CREDENTIALS outside /),
    ]);
  });

  it('reports an unset variable in a secret where it is used', async () => {
    expect(await problemsOf(app('{ type: bearer, token: "${NOTES_TOKEN}" }'))).toEqual([
      'runner.config.yaml:4:35: environment variable `NOTES_TOKEN` is not set (used in `auth.token` of app `notes`)\n' +
        '  hint: set NOTES_TOKEN in the environment, or give a default: ${NOTES_TOKEN:-value}',
    ]);
  });
});

describe('credentialsFilePath', () => {
  it('prefers RUNNER_CREDENTIALS, then an absolute XDG_CONFIG_HOME, then ~/.config', () => {
    expect(credentialsFilePath({ RUNNER_CREDENTIALS: 'creds.json', XDG_CONFIG_HOME: '/xdg', HOME: '/home/u' }, '/project')).toBe('/project/creds.json');
    expect(credentialsFilePath({ XDG_CONFIG_HOME: '/xdg', HOME: '/home/u' }, '/project')).toBe('/xdg/runner/credentials.json');
    expect(credentialsFilePath({ XDG_CONFIG_HOME: 'relative', HOME: '/home/u' }, '/project')).toBe('/home/u/.config/runner/credentials.json');
  });
});
