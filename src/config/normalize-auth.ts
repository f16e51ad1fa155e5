import { homedir } from 'node:os';
import { isAbsolute, relative, resolve } from 'node:path';
import { CREDENTIALS_ENV, credentialsFilePath } from '../auth/credentials-path.js';
import type { Diagnostic } from '../errors.js';
import type { AppDeclaration } from './normalize.js';
import type { RawApp } from './schema.js';
import { describePath } from './schema-diagnostics.js';
import type { AppAuth, AppConfig, CredentialSource, SecretEntry } from './types.js';
import { isHttpUrl } from './http-url.js';
import { locatePath } from './yaml-source.js';

type RawAuth = NonNullable<RawApp['auth']>;
type AuthKey = keyof RawAuth;

/** Which keys each `auth.type` needs, and which it allows besides `type`. */
const AUTH_KEYS: Record<AppAuth['type'], { required: AuthKey[]; allowed: AuthKey[] }> = {
  oauth: { required: [], allowed: ['scopes', 'client-id', 'client-secret', 'redirect-port', 'dpop'] },
  'client-credentials': { required: ['client-id'], allowed: ['scopes', 'client-id', 'client-secret', 'private-key', 'algorithm', 'dpop'] },
  'workload-identity': { required: ['client-id'], allowed: ['scopes', 'client-id', 'assertion', 'assertion-file', 'dpop'] },
  'enterprise-managed': {
    required: ['client-id', 'client-secret', 'idp-client-id'],
    allowed: ['scopes', 'client-id', 'client-secret', 'idp', 'idp-token-endpoint', 'idp-client-id', 'idp-client-secret', 'id-token', 'id-token-file', 'dpop'],
  },
  bearer: { required: ['token'], allowed: ['token'] },
};

/** The keys whose values are masked everywhere. */
const SECRET_KEYS = ['client-secret', 'private-key', 'token', 'assertion', 'idp-client-secret', 'id-token'] as const;

/** Credentials given either in the config or as a file: exactly one of the two keys. */
const CREDENTIAL_PAIRS: Partial<Record<AppAuth['type'], { value: 'assertion' | 'id-token'; file: 'assertion-file' | 'id-token-file'; what: string }>> = {
  'workload-identity': { value: 'assertion', file: 'assertion-file', what: 'the workload\'s JWT' },
  'enterprise-managed': { value: 'id-token', file: 'id-token-file', what: 'the user\'s ID token' },
};

/**
 * `auth:` of an HTTP app, shape already validated: checks which keys its
 * type needs and allows (each problem at its key), expands ${VAR}, and for
 * `oauth` says where the per-user credentials file is.
 */
export function normalizeAuth(
  declaration: AppDeclaration,
  context: { dir: string; artifacts: string; env: NodeJS.ProcessEnv; expand: (text: string, sub: (string | number)[]) => string },
  diagnostics: Diagnostic[],
): AppAuth | undefined {
  const raw = declaration.raw.auth!;
  const type = raw.type!;
  const at = (key: string, kind: 'key' | 'value' = 'key') => locatePath(declaration.source, [...declaration.path, 'auth', key], kind);
  const where = describePath([...declaration.path, 'auth'], undefined, declaration.names);
  const { required, allowed } = AUTH_KEYS[type];
  let valid = true;
  for (const key of Object.keys(raw) as AuthKey[]) {
    if (key === 'type' || allowed.includes(key)) continue;
    valid = false;
    const owners = (Object.keys(AUTH_KEYS) as AppAuth['type'][]).filter((other) => AUTH_KEYS[other].allowed.includes(key));
    diagnostics.push({ location: at(key), message: `\`${key}\` does not apply to \`type: ${type}\` in ${where}; it belongs with ${owners.map((owner) => `\`type: ${owner}\``).join(' or ')}` });
  }
  for (const key of required) {
    if (raw[key] !== undefined) continue;
    valid = false;
    diagnostics.push({ location: at('type', 'value'), message: `${where} of \`type: ${type}\` is missing \`${key}\``, hint: type === 'bearer' ? 'write the token as ${VAR} and set VAR in the environment or .env' : undefined });
  }
  if (type === 'oauth' && raw['client-secret'] !== undefined && raw['client-id'] === undefined) {
    valid = false;
    diagnostics.push({ location: at('client-secret'), message: `\`client-secret\` in ${where} needs \`client-id\`: a dynamically registered client gets its secret from the registration` });
  }
  if (type === 'client-credentials' && (raw['client-secret'] === undefined) === (raw['private-key'] === undefined)) {
    valid = false;
    const both = raw['client-secret'] !== undefined;
    diagnostics.push({
      location: both ? at('private-key') : at('type', 'value'),
      message: both ? `${where} has both \`client-secret\` and \`private-key\`; the client authenticates with one of them` : `${where} of \`type: client-credentials\` is missing \`client-secret\` (or \`private-key\` for a signed JWT)`,
      hint: 'write the secret or the PEM key as ${VAR} and set VAR in the environment or .env',
    });
  }
  const pair = CREDENTIAL_PAIRS[type];
  if (pair && (raw[pair.value] === undefined) === (raw[pair.file] === undefined)) {
    valid = false;
    const both = raw[pair.value] !== undefined;
    diagnostics.push({
      location: both ? at(pair.file) : at('type', 'value'),
      message: both
        ? `${where} has both \`${pair.value}\` and \`${pair.file}\`; ${pair.what} comes from one of them`
        : `${where} of \`type: ${type}\` is missing \`${pair.value}\` (or \`${pair.file}\`): ${pair.what}`,
      hint: `write it as \${VAR} and set VAR in the environment, or name the file the platform keeps it in`,
    });
  }
  if (type === 'enterprise-managed' && (raw.idp === undefined) === (raw['idp-token-endpoint'] === undefined)) {
    valid = false;
    const both = raw.idp !== undefined;
    diagnostics.push({
      location: both ? at('idp-token-endpoint') : at('type', 'value'),
      message: both
        ? `${where} has both \`idp\` and \`idp-token-endpoint\`; the token endpoint is either discovered from the issuer or given`
        : `${where} of \`type: enterprise-managed\` is missing \`idp\` (the identity provider's issuer URL, or \`idp-token-endpoint\`)`,
    });
  }
  for (const key of ['idp', 'idp-token-endpoint'] as const) {
    if (raw[key] === undefined || isHttpUrl(context.expand(raw[key], ['auth', key]))) continue;
    valid = false;
    diagnostics.push({ location: at(key, 'value'), message: `\`${key}\` in ${where} is not an http(s) URL`, hint: key === 'idp' ? 'the identity provider\'s issuer, such as https://idp.example.com' : 'such as https://idp.example.com/oauth2/token' });
  }
  if (raw.algorithm !== undefined && raw['private-key'] === undefined) {
    valid = false;
    diagnostics.push({ location: at('algorithm'), message: `\`algorithm\` in ${where} signs the JWT of \`private-key\`, which is not set` });
  }
  if (!valid) return undefined;
  const text = (key: 'client-id' | 'client-secret' | 'private-key' | 'token' | 'idp' | 'idp-token-endpoint' | 'idp-client-id' | 'idp-client-secret') =>
    raw[key] === undefined ? undefined : context.expand(raw[key], ['auth', key]);
  const credential = (value: 'assertion' | 'id-token', file: 'assertion-file' | 'id-token-file'): CredentialSource =>
    raw[value] !== undefined ? { value: context.expand(raw[value], ['auth', value]) } : { file: resolveFile(context.expand(raw[file]!, ['auth', file]), context.dir, context.env) };
  const scopes = [...new Set(raw.scopes ?? [])];
  const dpop = raw.dpop ?? 'auto';
  switch (type) {
    case 'oauth': {
      const credentialsFile = credentialsFilePath(context.env, context.dir);
      const inside = relative(context.artifacts, credentialsFile);
      if (!inside.startsWith('..') && !isAbsolute(inside)) {
        diagnostics.push({
          location: at('type', 'value'),
          message: `the credentials file ${credentialsFile} (${CREDENTIALS_ENV}) is inside the artifacts folder, where tokens are never kept`,
          hint: `point ${CREDENTIALS_ENV} outside ${context.artifacts}, or unset it for ~/.config/runner/credentials.json`,
        });
        return undefined;
      }
      return {
        type,
        scopes,
        ...(raw['client-id'] !== undefined && { clientId: text('client-id') }),
        ...(raw['client-secret'] !== undefined && { clientSecret: text('client-secret') }),
        ...(raw['redirect-port'] !== undefined && { redirectPort: raw['redirect-port'] }),
        credentialsFile,
        dpop,
      };
    }
    case 'client-credentials':
      return {
        type,
        clientId: text('client-id')!,
        ...(raw['client-secret'] !== undefined && { clientSecret: text('client-secret') }),
        ...(raw['private-key'] !== undefined && { privateKey: text('private-key') }),
        ...(raw.algorithm !== undefined && { algorithm: raw.algorithm }),
        scopes,
        dpop,
      };
    case 'workload-identity':
      return { type, clientId: text('client-id')!, assertion: credential('assertion', 'assertion-file'), scopes, dpop };
    case 'enterprise-managed':
      return {
        type,
        clientId: text('client-id')!,
        clientSecret: text('client-secret')!,
        idp: raw.idp !== undefined ? { issuer: text('idp')! } : { tokenEndpoint: text('idp-token-endpoint')! },
        idpClientId: text('idp-client-id')!,
        ...(raw['idp-client-secret'] !== undefined && { idpClientSecret: text('idp-client-secret') }),
        idToken: credential('id-token', 'id-token-file'),
        scopes,
        dpop,
      };
    case 'bearer':
      return { type, token: text('token')! };
  }
}

const WHOLE_VARIABLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}$/;

/** The secret values an `auth:` block holds, by its config key (`client-secret`, `token`, ...); a credential read from a file is not among them. */
export function authSecretValues(auth: AppAuth): Record<(typeof SECRET_KEYS)[number], string | undefined> {
  return {
    'client-secret': auth.type === 'bearer' || auth.type === 'workload-identity' ? undefined : auth.clientSecret,
    'private-key': auth.type === 'client-credentials' ? auth.privateKey : undefined,
    token: auth.type === 'bearer' ? auth.token : undefined,
    assertion: auth.type === 'workload-identity' && 'value' in auth.assertion ? auth.assertion.value : undefined,
    'idp-client-secret': auth.type === 'enterprise-managed' ? auth.idpClientSecret : undefined,
    'id-token': auth.type === 'enterprise-managed' && 'value' in auth.idToken ? auth.idToken.value : undefined,
  };
}

/**
 * The secrets of `auth:` blocks (`client-secret`, `token`), each named by the
 * variable it was written as (`${NOTES_TOKEN}` → NOTES_TOKEN), or for a value
 * written out, by a name made from the app (RUNNER_AUTH_NOTES_TOKEN), which
 * the run store keeps in its place.
 */
export function collectAuthSecrets(declarations: AppDeclaration[], apps: Record<string, AppConfig>): SecretEntry[] {
  const entries: SecretEntry[] = [];
  for (const declaration of declarations) {
    const app = apps[declaration.name];
    const raw = declaration.raw.auth;
    if (!raw || !app || app.transport === 'stdio' || !app.auth) continue;
    const values = authSecretValues(app.auth);
    for (const key of SECRET_KEYS) {
      const value = values[key];
      if (!value) continue;
      const variable = WHOLE_VARIABLE.exec(raw[key] ?? '')?.[1];
      entries.push({ name: variable ?? `RUNNER_AUTH_${declaration.name}_${key}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_'), value });
    }
  }
  return entries;
}

/** A secret written out in `auth:` can be used by anyone who reads the config: say so at load. */
export function warnLiteralAuthSecrets(declarations: AppDeclaration[]): Diagnostic[] {
  const warnings: Diagnostic[] = [];
  for (const declaration of declarations) {
    const raw = declaration.raw.auth;
    for (const key of SECRET_KEYS) {
      const value = raw?.[key];
      if (value === undefined || value.includes('${')) continue;
      warnings.push({
        severity: 'warning',
        location: locatePath(declaration.source, [...declaration.path, 'auth', key]),
        message: `app \`${declaration.name}\` has its \`auth.${key}\` written in the config, where anyone who can read the file can use it`,
        hint: `write it as \${VARIABLE} and set VARIABLE in the environment or in .env beside the config`,
      });
    }
  }
  return warnings;
}

/** A credential file's path: `~` and `$HOME` are the user's home, a relative path is from the config's folder. */
function resolveFile(path: string, dir: string, env: NodeJS.ProcessEnv): string {
  const home = env.HOME ?? homedir();
  const expanded = path === '~' ? home : path.startsWith('~/') ? home + path.slice(1) : path;
  return resolve(dir, expanded);
}
