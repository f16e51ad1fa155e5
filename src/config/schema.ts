import { DURATION_EXPECTED, DURATION_PATTERN, RATE_EXPECTED, RATE_PATTERN } from './durations.js';
import { SIZE_EXPECTED, SIZE_PATTERN } from './sizes.js';

// The JSON Schema of runner.config.yaml: the one source of truth for its shape.
// The validator compiles it, the raw types below derive from it, and
// `npm run schemas` writes it to schemas/config.schema.json for editors.
// Conventions: draft-07; `additionalProperties: false` on every fixed-key
// object; no `$ref` (errors inside a `oneOf` branch must carry a schemaPath
// under that branch); `errorMessage` says what a value must look like (VS Code
// shows it too) and is what diagnostics print after "expected".

/** The JSON Schema dialect of both schemas. */
export const SCHEMA_DIALECT = 'http://json-schema.org/draft-07/schema#';

/** The TypeScript type of data that validates against a literal (`as const`) schema. */
export type FromSchema<S> = S extends true
  ? unknown
  : S extends { readonly type: 'object' }
    ? ObjectFromSchema<S>
    : S extends { readonly type: 'array'; readonly items: infer I }
      ? FromSchema<I>[]
      : S extends { readonly const: infer C }
        ? C
        : S extends { readonly enum: readonly (infer E)[] }
          ? E
          : S extends { readonly type: infer T }
            ? PrimitiveFromType<T>
            : S extends { readonly oneOf: readonly (infer B)[] }
              ? FromSchema<B>
              : unknown;

type PrimitiveFromType<T> = T extends readonly (infer U)[]
  ? PrimitiveFromType<U>
  : T extends 'string'
    ? string
    : T extends 'integer' | 'number'
      ? number
      : T extends 'boolean'
        ? boolean
        : T extends 'null'
          ? null
          : unknown;

type ObjectFromSchema<S> = (S extends { readonly properties: infer P }
  ? { -readonly [K in keyof P]?: FromSchema<P[K]> }
  : unknown) &
  (S extends { readonly additionalProperties: infer A }
    ? A extends false
      ? unknown
      : Record<string, FromSchema<A>>
    : unknown);

/** A duration value (`500ms`, `30s`, `10m`, `2h`, `1h30m`). */
export function durationSchema<D extends string>(description: D) {
  return { type: 'string', pattern: DURATION_PATTERN, errorMessage: DURATION_EXPECTED, description } as const;
}

/** A size in bytes with a unit: `10MiB`. */
export function sizeSchema<D extends string>(description: D) {
  return { type: 'string', pattern: SIZE_PATTERN, errorMessage: SIZE_EXPECTED, description } as const;
}

/** A positive integer limit. */
export function countSchema<D extends string>(description: D) {
  return { type: 'integer', minimum: 1, description } as const;
}

/** A retry policy, or just a number of attempts (`retry: 3` = `retry: { attempts: 3 }`). */
export function retrySchema<D extends string>(description: D) {
  return {
    description,
    errorMessage: 'a number of attempts, or a mapping like { attempts: 3, delay: 1s }',
    oneOf: [
      countSchema('Total attempts including the first; shorthand for `{ attempts: N }`.'),
      {
        type: 'object',
        additionalProperties: false,
        properties: {
          attempts: countSchema('Total attempts including the first. Default: 1.'),
          delay: durationSchema('Delay before the second attempt; later delays grow by `backoff`. Default: 1s.'),
          backoff: { type: 'number', minimum: 1, description: 'Multiplier applied to the delay after each attempt. Default: 2.' },
          'max-delay': durationSchema('Upper bound for one delay. Default: 30s.'),
          on: {
            type: 'array',
            description: 'Failure kinds that may be retried. Default: [transport, timeout, protocol].',
            items: { type: 'string', enum: ['transport', 'timeout', 'protocol', 'tool'] },
          },
          unsafe: {
            type: 'boolean',
            description: 'Retry even a call that is neither read-only nor idempotent and may have reached the server. Default: false.',
          },
        },
      },
    ],
  } as const;
}

const policyActionSchema = <D extends string>(description: D) =>
  ({ type: 'string', enum: ['allow', 'ask', 'deny'], description }) as const;

const stringMapSchema = <D extends string>(description: D) =>
  ({ type: 'object', description, additionalProperties: { type: 'string' } }) as const;

/**
 * What `protocol:` accepts: `auto`, or a version the client SDK speaks (the
 * 2026 era through `server/discover`, the 2025 ones through `initialize`).
 */
export const PROTOCOL_CHOICES = ['auto', '2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'] as const;

/** Signing algorithms for `private_key_jwt` client authentication. */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** An OAuth scope-token (RFC 6749 §3.3): printable ASCII without spaces, quotes or backslashes. */
const SCOPE_PATTERN = '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$';

/**
 * `auth:` of an HTTP app. One mapping for all three types (not a `oneOf`), so
 * a typo gets "unknown key" with a did-you-mean; which keys each type needs
 * or allows is checked during normalization, at the key.
 */
const authSchema = {
  type: 'object',
  description:
    'How runner authorizes itself to this HTTP app: `oauth` (MCP authorization, `runner auth login APP`), `client-credentials` (machine to machine), `workload-identity` (a JWT the platform issues this workload), `enterprise-managed` (the user\'s ID token from the enterprise identity provider) or `bearer` (a static token).',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: {
      type: 'string',
      enum: ['oauth', 'client-credentials', 'workload-identity', 'enterprise-managed', 'bearer'],
      description: 'oauth | client-credentials | workload-identity | enterprise-managed | bearer.',
    },
    scopes: {
      type: 'array',
      description: 'All types but bearer: scopes to ask for. Default: what the server\'s metadata lists.',
      items: { type: 'string', pattern: SCOPE_PATTERN, errorMessage: 'a scope name without spaces' },
    },
    'client-id': {
      type: 'string',
      minLength: 1,
      description:
        'oauth: a pre-registered client id (default: dynamic client registration; an https URL is a client ID metadata document). client-credentials, workload-identity, enterprise-managed: required (the client registered at the MCP server\'s authorization server). ${VAR} expands.',
    },
    'client-secret': { type: 'string', minLength: 1, description: 'The client secret, for a confidential client; masked everywhere. ${VAR} expands.' },
    'private-key': {
      type: 'string',
      minLength: 1,
      description: 'client-credentials: a PEM private key that signs a JWT to authenticate the client (`private_key_jwt`), instead of `client-secret`; masked everywhere. Write it as ${VAR}.',
    },
    algorithm: {
      type: 'string',
      enum: JWT_ALGORITHMS,
      description: 'client-credentials with `private-key`: the JWT signing algorithm. Default: from the key (RS256 for RSA, ES256/ES384/ES512 for EC, EdDSA for Ed25519).',
    },
    'redirect-port': { type: 'integer', minimum: 1, maximum: 65535, description: 'oauth: the 127.0.0.1 port `runner auth login` receives the redirect on. Default: a free port.' },
    token: { type: 'string', minLength: 1, description: 'bearer: the token, sent as `Authorization: Bearer`; masked everywhere. Write it as ${VAR}.' },
    dpop: {
      enum: [true, false, 'auto'],
      errorMessage: 'true, false or auto',
      description: 'All types but bearer: bind tokens to a key runner holds (DPoP): true, false, or auto (when the server\'s 401 challenge asks for DPoP). Default: auto.',
    },
    assertion: { type: 'string', minLength: 1, description: 'workload-identity: the JWT the platform issued this workload; masked everywhere. Write it as ${VAR}.' },
    'assertion-file': { type: 'string', minLength: 1, description: 'workload-identity: a file holding that JWT, read at each token request (platforms rotate it). Relative to the config\'s folder.' },
    idp: { type: 'string', minLength: 1, description: 'enterprise-managed: the identity provider\'s issuer URL; its token endpoint is discovered from its metadata.' },
    'idp-token-endpoint': {
      type: 'string',
      minLength: 1,
      description: 'enterprise-managed: the identity provider\'s token endpoint, instead of `idp` where its metadata cannot be discovered.',
    },
    'idp-client-id': { type: 'string', minLength: 1, description: 'enterprise-managed: the client registered at the identity provider for the token exchange. ${VAR} expands.' },
    'idp-client-secret': { type: 'string', minLength: 1, description: 'enterprise-managed: that client\'s secret, if it has one; masked everywhere. Write it as ${VAR}.' },
    'id-token': { type: 'string', minLength: 1, description: 'enterprise-managed: the user\'s OpenID Connect ID token from the identity provider; masked everywhere. Write it as ${VAR}.' },
    'id-token-file': { type: 'string', minLength: 1, description: 'enterprise-managed: a file holding that ID token, read at each token request. Relative to the config\'s folder.' },
  },
} as const;

const appSchema = {
  type: 'object',
  description: 'An MCP app: a stdio app (`command`) or a Streamable HTTP app (`url`).',
  errorMessage: 'exactly one of `command` (a stdio app) or `url` (a Streamable HTTP app)',
  additionalProperties: false,
  oneOf: [{ required: ['command'] }, { required: ['url'] }],
  properties: {
    command: { type: 'string', minLength: 1, description: 'Program that starts a stdio app, found on PATH or relative to `cwd`.' },
    args: {
      type: 'array',
      items: { type: 'string' },
      description: 'Arguments for `command`, passed as written after ${VAR} expansion (not resolved as paths; they are relative to `cwd`).',
    },
    env: stringMapSchema('Environment added to the app process; ${VAR} expands from the runner\'s environment.'),
    cwd: { type: 'string', description: 'Working folder of the app process, relative to the config folder. Default: the config folder.' },
    url: { type: 'string', minLength: 1, description: 'Streamable HTTP endpoint of the app; ${VAR} expands.' },
    headers: stringMapSchema('HTTP headers sent with every request; ${VAR} expands.'),
    auth: authSchema,
    concurrency: countSchema('Max calls in flight to this app.'),
    rate: { type: 'string', pattern: RATE_PATTERN, errorMessage: RATE_EXPECTED, description: 'Rate limit (N/s, N/min, N/h); calls are delayed, never dropped.' },
    timeout: durationSchema('Default per-call timeout for this app.'),
    'connect-timeout': durationSchema('How long starting or reaching the app, its handshake and its tool list may take. Default: 30s.'),
    'max-result': sizeSchema('The largest result (one message) this app may send; larger fails the call, naming this limit. Default: 64MiB.'),
    'max-log': sizeSchema('The most of this app\'s stderr kept per run in logs/<app>.log: the beginning, a marker, and the last part. Default: 10MiB.'),
    'stop-timeout': durationSchema(
      'A stdio app: how long it gets to exit after runner closes its stdin, and again after SIGTERM, before SIGKILL. Default: 2s.',
    ),
    transport: {
      type: 'string',
      enum: ['streamable-http', 'sse'],
      description: 'How to speak to a `url` app: `streamable-http` (the default), or `sse` for a legacy HTTP+SSE server.',
    },
    protocol: {
      type: 'string',
      enum: PROTOCOL_CHOICES,
      errorMessage: `\`auto\` or a protocol version: ${PROTOCOL_CHOICES.slice(1).join(', ')}`,
      description: 'The MCP protocol version to speak: `auto` (the default) asks the app with `server/discover` and falls back to `initialize`; a version pins it and skips that probe.',
    },
    roots: {
      description: 'Folders sent to the app as roots, relative to the config folder; `false` declares no roots capability. Default: the artifacts folder and every existing folder named in `args`.',
      errorMessage: 'a list of folders, or false for no roots',
      oneOf: [
        { type: 'array', items: { type: 'string' } },
        { type: 'boolean', const: false },
      ],
    },
  },
} as const;

/** The schema of runner.config.yaml. */
export const configSchema = {
  $schema: SCHEMA_DIALECT,
  title: 'runner.config.yaml',
  description: 'Apps, limits, retry defaults and permission policy for runner.',
  type: 'object',
  additionalProperties: false,
  properties: {
    artifacts: { type: 'string', minLength: 1, description: 'Shared artifacts folder, relative to the config folder. Default: artifacts.' },
    concurrency: countSchema('Max tool calls in flight in the whole process. Default: 8.'),
    apps: {
      type: 'object',
      description: 'MCP apps by name.',
      propertyNames: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', errorMessage: 'an app name of letters, digits, `_` and `-`' },
      additionalProperties: appSchema,
    },
    import: {
      type: 'array',
      description:
        'Files of other MCP clients to read more apps from: `mcpServers` files (.mcp.json, claude_desktop_config.json, Cursor) and VS Code `servers` files (.vscode/mcp.json); apps in this file win.',
      items: {
        errorMessage: 'a file path, or a mapping like { file: .vscode/mcp.json, skip: [github] }',
        oneOf: [
          { type: 'string', minLength: 1 },
          {
            type: 'object',
            additionalProperties: false,
            required: ['file'],
            properties: {
              file: { type: 'string', minLength: 1, description: 'The file, relative to the config folder.' },
              only: { type: 'array', items: { type: 'string' }, description: 'Import only the servers of these names (as the file names them).' },
              skip: { type: 'array', items: { type: 'string' }, description: 'Do not import the servers of these names (as the file names them).' },
              rename: {
                type: 'object',
                description: 'Import a server under another app name: { name in the file: app name }.',
                additionalProperties: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', errorMessage: 'an app name of letters, digits, `_` and `-`' },
              },
            },
          },
        ],
      },
    },
    queue: {
      type: 'string',
      minLength: 1,
      description: 'Queue mode: a redis:// URL. `runner run` and `serve` dispatch every app call as a BullMQ job; `runner worker` processes execute them. `--queue URL` wins over it.',
    },
    retry: retrySchema('Default retry policy for every step.'),
    policy: {
      type: 'object',
      description: 'What to do with a call, by the tool\'s annotations; `rules` win over annotations.',
      additionalProperties: false,
      properties: {
        'read-only': policyActionSchema('Tools with readOnlyHint: true. Default: allow.'),
        destructive: policyActionSchema('Tools that may be destructive (the MCP default). Default: ask.'),
        other: policyActionSchema('Tools that are not read-only and have destructiveHint: false. Default: allow.'),
        'open-world': policyActionSchema('Extra gate for tools with openWorldHint: true (the MCP default). Default: allow.'),
        'headless-ask': {
          type: 'string',
          enum: ['deny', 'wait'],
          description:
            'What `ask` does when nobody can be asked (no TTY: serve, cron, CI): `deny` the call, or `wait`: the step waits for `runner approve RUN STEP` or `runner deny RUN STEP`. Default: deny.',
        },
        'approval-timeout': durationSchema('With `headless-ask: wait`: how long an approval waits for an answer before it counts as denied (expired). Default: 24h.'),
        rules: {
          type: 'array',
          description: 'First match wins; `match` is a glob on `app.tool`.',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['match', 'action'],
            properties: {
              match: { type: 'string', minLength: 1, description: 'Glob on `app.tool`: `*` matches any run of characters, `?` one.' },
              action: policyActionSchema('What to do with a matching call.'),
            },
          },
        },
      },
    },
    retention: {
      type: 'object',
      description: 'How long run history is kept, per workflow: `runner runs prune` with no flags, and `serve` after each run, delete runs past either limit (never one still running).',
      additionalProperties: false,
      properties: {
        'max-age': durationSchema('Delete runs that started longer ago than this (e.g. 30d).'),
        'max-runs': countSchema('Keep at most this many runs per workflow, newest first.'),
      },
    },
    secrets: {
      type: 'array',
      description: 'Names of environment variables whose values are masked as *** everywhere.',
      items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', errorMessage: 'an environment variable name' },
    },
  },
} as const;

/** runner.config.yaml as written, after validation. */
export type RawConfig = FromSchema<typeof configSchema>;
/** One app as written. */
export type RawApp = FromSchema<typeof appSchema>;
/** One `import` entry as written: a path or a mapping with `file`. */
export type RawImport = NonNullable<RawConfig['import']>[number];
/** A retry policy as written (number of attempts or mapping). */
export type RawRetry = FromSchema<ReturnType<typeof retrySchema>>;

/** The text of a generated `schemas/*.schema.json` file. */
export function renderSchemaFile(schema: object): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
