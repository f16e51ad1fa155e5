import type { Diagnostic, SourceLocation } from '../errors.js';

/** allow | ask | deny: what the policy does with a call. */
export type PolicyAction = 'allow' | 'ask' | 'deny';

/** Failure kinds of a step's error (docs/apps.md, Failures). */
export type FailureKind =
  | 'tool'
  | 'protocol'
  | 'transport'
  | 'timeout'
  | 'cancelled'
  | 'policy'
  | 'unavailable'
  | 'input'
  | 'storage';

/** A rate limit: at most `count` calls per `intervalMs`. Parsed from `15/min`. */
export interface Rate {
  count: number;
  intervalMs: number;
}

/** Retry policy, normalized (docs/apps.md, Retries). Durations in ms. */
export interface RetryPolicy {
  /** Total attempts including the first. @default 1 */
  attempts: number;
  /** Delay before the second attempt. @default 1000 */
  delayMs: number;
  /** Multiplier per attempt. @default 2 */
  backoff: number;
  /** Upper bound for one delay. @default 30000 */
  maxDelayMs: number;
  /** Failure kinds that may be retried. @default ['transport','timeout','protocol'] */
  on: FailureKind[];
  /** Retry even when the call is neither read-only nor idempotent. @default false */
  unsafe: boolean;
}

/** A partial retry policy as written in a config or workflow file, already normalized per key. */
export type RetryOverrides = Partial<RetryPolicy>;

interface AppConfigBase {
  name: string;
  /** Max calls in flight to this app. */
  concurrency?: number;
  rate?: Rate;
  /** Default per-call timeout for this app. */
  timeoutMs?: number;
  /** Connecting, handshake and tool list (`connect-timeout`). @default 30000 */
  connectTimeoutMs?: number;
  /** The largest message (a result, a tool list) it may send (`max-result`). @default 64 MiB */
  maxResultBytes?: number;
  /** The most of its stderr kept per run (`max-log`). @default 10 MiB */
  maxLogBytes?: number;
  /** Absolute folders sent as roots; false = no roots capability. Default: artifacts and the existing folders in `args`. */
  roots: string[] | false;
  /** A pinned protocol version (`protocol:`): no `server/discover` probe. Absent: `auto`. */
  protocol?: string;
  /** Where the app was declared (config file or imported JSON). */
  location?: SourceLocation;
}

/** An app launched as a child process and spoken to over stdio. */
export interface StdioAppConfig extends AppConfigBase {
  transport: 'stdio';
  command: string;
  args: string[];
  /** Env added to the child's environment, ${VAR} already expanded. */
  env: Record<string, string>;
  /** Absolute working directory. */
  cwd: string;
  /** How long it gets to exit once its stdin is closed, and again after SIGTERM (`stop-timeout`). @default 2000 */
  stopTimeoutMs?: number;
}

/** An app reached over Streamable HTTP. */
export interface HttpAppConfig extends AppConfigBase {
  transport: 'http';
  url: string;
  headers: Record<string, string>;
  /** How runner authorizes itself to the app (`auth:`); absent: no authorization beyond `headers`. */
  auth?: AppAuth;
}

/** `auth:` of an HTTP app, normalized: MCP authorization (OAuth 2.1), one of its machine-to-machine grants, or a static token. */
export type AppAuth = OAuthAppAuth | ClientCredentialsAppAuth | EnterpriseManagedAppAuth | WorkloadIdentityAppAuth | BearerAppAuth;

/** The auth types that get their tokens without a person: from credentials or an assertion, at run time. */
export type MachineAppAuth = ClientCredentialsAppAuth | EnterpriseManagedAppAuth | WorkloadIdentityAppAuth;

/**
 * `auth.dpop`: `true` binds tokens to a key runner holds (DPoP, RFC 9449),
 * `false` never does, `auto` does when the server's 401 challenge names the
 * `DPoP` scheme.
 */
export type DpopSetting = 'auto' | boolean;

/** A credential written in the config (`${VAR}` expanded at load), or a file read again at each token request (it may rotate). */
export type CredentialSource = { value: string } | { file: string };

/** `auth: { type: oauth }`: the authorization code flow with PKCE (`runner auth login APP`), tokens kept per user. */
export interface OAuthAppAuth {
  type: 'oauth';
  /** Scopes to ask for; none: what the server's metadata says. */
  scopes: string[];
  /** A pre-registered client id (an https URL: a client ID metadata document); none: dynamic client registration. */
  clientId?: string;
  clientSecret?: string;
  /** The 127.0.0.1 port of the login redirect; none: a free port. */
  redirectPort?: number;
  /** The per-user credentials file where tokens and client registrations live (absolute). */
  credentialsFile: string;
  dpop: DpopSetting;
}

/** `auth: { type: client-credentials }`: machine-to-machine tokens for the client id, with its secret or a JWT signed with its private key. */
export interface ClientCredentialsAppAuth {
  type: 'client-credentials';
  clientId: string;
  /** Exactly one of `clientSecret` and `privateKey`. */
  clientSecret?: string;
  /** A PEM private key for `private_key_jwt` client authentication (RFC 7523). */
  privateKey?: string;
  /** The JWT signing algorithm; default: from the key (RS256, ES256/384/512, EdDSA). */
  algorithm?: string;
  scopes: string[];
  dpop: DpopSetting;
}

/**
 * `auth: { type: enterprise-managed }` (MCP's enterprise-managed
 * authorization): the user's ID token from the enterprise identity provider
 * is exchanged there for an identity assertion grant (ID-JAG, RFC 8693),
 * which the MCP server's authorization server trades for a token (RFC 7523).
 */
export interface EnterpriseManagedAppAuth {
  type: 'enterprise-managed';
  /** The client registered at the MCP server's authorization server, and its secret. */
  clientId: string;
  clientSecret: string;
  /** The identity provider: its issuer URL (the token endpoint is discovered), or its token endpoint. */
  idp: { issuer: string } | { tokenEndpoint: string };
  /** The client registered at the identity provider for the token exchange, and its secret if it has one. */
  idpClientId: string;
  idpClientSecret?: string;
  /** The user's OpenID Connect ID token from the identity provider. */
  idToken: CredentialSource;
  scopes: string[];
  dpop: DpopSetting;
}

/**
 * `auth: { type: workload-identity }` (workload identity federation): a
 * JWT the platform issues to this workload (a Kubernetes service account
 * token, a CI job's OIDC token) is the grant (RFC 7523 JWT bearer).
 */
export interface WorkloadIdentityAppAuth {
  type: 'workload-identity';
  clientId: string;
  assertion: CredentialSource;
  scopes: string[];
  dpop: DpopSetting;
}

/** `auth: { type: bearer }`: a static token, sent as `Authorization: Bearer`. */
export interface BearerAppAuth {
  type: 'bearer';
  token: string;
}

/** An app reached over the legacy HTTP+SSE transport (`transport: sse`): an HTTP app in all but the wire. */
export interface SseAppConfig extends Omit<HttpAppConfig, 'transport'> {
  transport: 'sse';
}

export type AppConfig = StdioAppConfig | HttpAppConfig | SseAppConfig;

/**
 * A server of an imported file that runner cannot use (unknown type, unset
 * variable, `${input:...}`, a bad name): a warning at load, and an error
 * only where a workflow uses it.
 */
export interface UnusableApp {
  name: string;
  /** Where the server (or its first problem) is written in the imported file. */
  location: SourceLocation;
  /** Why, each said plainly: "environment variable `TOKEN` is not set". */
  reasons: string[];
  hint?: string;
}

export interface PolicyRule {
  /** Glob on `app.tool` (`*` matches any run of characters, `?` one). */
  match: string;
  action: PolicyAction;
}

export interface PolicyConfig {
  readOnly: PolicyAction; // default allow
  destructive: PolicyAction; // default ask
  other: PolicyAction; // default allow
  openWorld: PolicyAction; // default allow
  /** What `ask` does with no TTY: deny the call, or wait for `runner approve`/`deny`. @default 'deny' */
  headlessAsk: 'deny' | 'wait';
  /** How long a waiting approval waits before it expires as denied. @default 86_400_000 (24h) */
  approvalTimeoutMs: number;
  rules: PolicyRule[];
}

/** runner.config.yaml after loading and normalization. All paths absolute. */
export interface RunnerConfig {
  /** The config file, or null when none was found (defaults only). */
  file: string | null;
  /** The folder relative paths resolve against. */
  dir: string;
  /** Absolute artifacts folder. */
  artifacts: string;
  /** Max tool calls in flight, whole process. @default 8 */
  concurrency: number;
  apps: Record<string, AppConfig>;
  retry: RetryPolicy;
  policy: PolicyConfig;
  /** Env names whose values are masked. */
  secrets: string[];
  /** The values to mask (from `secrets`), longest first. */
  secretValues: string[];
  /** The same values with the name each came from (the run store keeps the name, never the value). */
  secretEntries: SecretEntry[];
  /** Run history limits per workflow (`retention:`); absent keys keep runs for good. */
  retention: RetentionPolicy;
  /** Queue mode: the redis:// URL of the BullMQ queues (`queue:`, or `--queue URL`); absent: calls run in this process. */
  queue?: string;
  /** Problems that do not stop anything (a secret in an app's `args`), for the CLI to print. */
  warnings: Diagnostic[];
  /** Imported servers that cannot be used, by app name; absent when there are none. */
  unusableApps?: Record<string, UnusableApp>;
}

/** A secret value and the env name it came from. */
export interface SecretEntry {
  name: string;
  value: string;
}

/** `retention:` of runner.config.yaml, normalized. */
export interface RetentionPolicy {
  maxAgeMs?: number;
  maxRuns?: number;
}
