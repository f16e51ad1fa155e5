import { resolve } from 'node:path';
import { isWarning, type Diagnostic } from '../errors.js';
import { parseDuration, parseRate, zeroTimeoutWarning } from './durations.js';
import { collectAuthSecrets, normalizeAuth, warnLiteralAuthSecrets } from './normalize-auth.js';
import { parseSize } from './sizes.js';
import type { RawApp, RawConfig, RawRetry } from './schema.js';
import { describePath, type PathNames } from './schema-diagnostics.js';
import { defaultRoots } from './default-roots.js';
import type { AppConfig, FailureKind, PolicyConfig, RetryOverrides, RetryPolicy, RunnerConfig, SecretEntry, UnusableApp } from './types.js';
import { locateInString, locatePath, type YamlPath, type YamlSource } from './yaml-source.js';
import { QUEUE_URL_ENV } from './queue-url.js';
import { isHttpUrl } from './http-url.js';

/** Max tool calls in flight in the whole process when the config does not say. */
export const DEFAULT_CONCURRENCY = 8;

/** The retry policy when the config does not say: one attempt, no retries. */
export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 1,
  delayMs: 1_000,
  backoff: 2,
  maxDelayMs: 30_000,
  on: ['transport', 'timeout', 'protocol'],
  unsafe: false,
};

/** The policy when the config does not say: ask before destructive calls, allow the rest. */
export const DEFAULT_POLICY: PolicyConfig = {
  readOnly: 'allow',
  destructive: 'ask',
  other: 'allow',
  openWorld: 'allow',
  headlessAsk: 'deny',
  approvalTimeoutMs: 24 * 3_600_000,
  rules: [],
};

/** An app as declared in runner.config.yaml or an imported mcpServers file, shape already validated. */
export interface AppDeclaration {
  name: string;
  raw: RawApp;
  source: YamlSource;
  /** Where the app is in its source: ['apps', name] or ['mcpServers', name]. */
  path: YamlPath;
  names: PathNames;
  /** Values are final: an importer already filled its file's own placeholders, so `${...}` is not expanded again. */
  literal?: boolean;
}

/** Names things in runner.config.yaml for messages. */
export const CONFIG_NAMES: PathNames = {
  root: 'the config',
  owner: (path) => (path[0] === 'apps' && path.length >= 2 ? { label: `app \`${String(path[1])}\``, length: 2 } : undefined),
};

export interface NormalizeConfigInput {
  raw: RawConfig;
  /** Absolute config file, or null for defaults. */
  file: string | null;
  /** Folder relative paths resolve against. */
  dir: string;
  /** Apps from runner.config.yaml and imports; later ones win on a name clash. */
  apps: AppDeclaration[];
  env: NodeJS.ProcessEnv;
  /** Problems found while reading the config that stop nothing (an imported server that was skipped). */
  warnings?: Diagnostic[];
  /** Imported servers that cannot be used (each already has its warning in `warnings`). */
  unusableApps?: UnusableApp[];
}

/** Applies defaults, resolves paths, expands ${VAR} and parses durations and rates. */
export function normalizeConfig(input: NormalizeConfigInput, diagnostics: Diagnostic[]): RunnerConfig {
  const { raw, dir, env } = input;
  const artifacts = resolve(dir, raw.artifacts ?? 'artifacts');
  // fromEntries: an app may be called `__proto__`, which plain assignment would not store.
  const apps: Record<string, AppConfig> = Object.fromEntries(
    input.apps.flatMap((declaration) => {
      const app = normalizeApp(declaration, { dir, artifacts, env }, diagnostics);
      return app ? [[declaration.name, app]] : [];
    }),
  );
  const secrets = raw.secrets ?? [];
  const secretEntries = collectSecretEntries(secrets, env, apps, collectAuthSecrets(input.apps, apps));
  return {
    file: input.file,
    dir,
    artifacts,
    concurrency: raw.concurrency ?? DEFAULT_CONCURRENCY,
    apps,
    retry: { ...DEFAULT_RETRY, ...normalizeRetry(raw.retry) },
    policy: normalizePolicy(raw.policy),
    secrets,
    secretValues: secretEntries.map((entry) => entry.value),
    secretEntries,
    retention: {
      ...(raw.retention?.['max-age'] !== undefined && { maxAgeMs: parseDuration(raw.retention['max-age']) }),
      ...(raw.retention?.['max-runs'] !== undefined && { maxRuns: raw.retention['max-runs'] }),
    },
    ...queueOf(raw.queue, env, diagnostics),
    // The apps' own warnings (a timeout of zero) were collected with the errors.
    warnings: [...(input.warnings ?? []), ...diagnostics.filter(isWarning), ...warnSecretsInArgs(input.apps, apps, secretEntries), ...warnLiteralAuthSecrets(input.apps)],
    ...(input.unusableApps?.length && { unusableApps: Object.fromEntries(input.unusableApps.map((app) => [app.name, app])) }),
  };
}

/** The queue URL: `--queue URL` (passed on as RUNNER_QUEUE_URL) wins over `queue:`, whose ${VAR}s expand from `env`. */
function queueOf(raw: string | undefined, env: NodeJS.ProcessEnv, diagnostics: Diagnostic[]): { queue?: string } {
  const override = env[QUEUE_URL_ENV];
  if (!override && raw === undefined) return {};
  const where = override ? '--queue' : '`queue`';
  const queue =
    override ||
    expandVariables(raw!, env, (variable) =>
      diagnostics.push({ message: `environment variable \`${variable}\` is not set (used in \`queue\`)`, hint: `set ${variable}, or pass --queue URL` }),
    );
  if (!queue) return {};
  // Not echoed back: the URL may hold a password.
  if (!/^rediss?:\/\/./.test(queue)) diagnostics.push({ message: `${where}: expected a redis:// or rediss:// URL, like redis://127.0.0.1:6379` });
  return { queue };
}

/** The environment variable that carries `--queue URL` to the config (and that sets queue mode without one). */

/** A retry policy as written (`3` or a mapping) → the keys it sets, durations in ms. */
export function normalizeRetry(raw: RawRetry | undefined): RetryOverrides {
  if (raw === undefined) return {};
  if (typeof raw === 'number') return { attempts: raw };
  const overrides: RetryOverrides = {};
  if (raw.attempts !== undefined) overrides.attempts = raw.attempts;
  if (raw.delay !== undefined) overrides.delayMs = parseDuration(raw.delay);
  if (raw.backoff !== undefined) overrides.backoff = raw.backoff;
  if (raw['max-delay'] !== undefined) overrides.maxDelayMs = parseDuration(raw['max-delay']);
  if (Array.isArray(raw.on)) overrides.on = [...new Set<FailureKind>(raw.on)];
  if (raw.unsafe !== undefined) overrides.unsafe = raw.unsafe;
  return overrides;
}

function normalizePolicy(raw: RawConfig['policy']): PolicyConfig {
  return {
    readOnly: raw?.['read-only'] ?? DEFAULT_POLICY.readOnly,
    destructive: raw?.destructive ?? DEFAULT_POLICY.destructive,
    other: raw?.other ?? DEFAULT_POLICY.other,
    openWorld: raw?.['open-world'] ?? DEFAULT_POLICY.openWorld,
    headlessAsk: raw?.['headless-ask'] ?? DEFAULT_POLICY.headlessAsk,
    approvalTimeoutMs: raw?.['approval-timeout'] !== undefined ? parseDuration(raw['approval-timeout'])! : DEFAULT_POLICY.approvalTimeoutMs,
    rules: (raw?.rules ?? []).map((rule) => ({ match: rule.match!, action: rule.action! })),
  };
}

const STDIO_ONLY_KEYS = ['args', 'env', 'cwd', 'stop-timeout'] as const;

function normalizeApp(
  declaration: AppDeclaration,
  context: { dir: string; artifacts: string; env: NodeJS.ProcessEnv },
  diagnostics: Diagnostic[],
): AppConfig | undefined {
  const { name, raw, source, path, names } = declaration;
  const where = (sub: YamlPath) => describePath([...path, ...sub], undefined, names);
  const expand = (text: string, sub: YamlPath) =>
    declaration.literal
      ? text
      : expandVariables(text, context.env, (variable, offset) =>
          diagnostics.push({
            location: locateInString(source, [...path, ...sub], offset),
            message: `environment variable \`${variable}\` is not set (used in ${where(sub)})`,
            hint: `set ${variable} in the environment, or give a default: \${${variable}:-value}`,
          }),
        );
  const expandMap = (map: Record<string, string> | undefined, key: string) =>
    Object.fromEntries(Object.entries(map ?? {}).map(([k, v]) => [k, expand(v, [key, k])]));

  const readTimeout = (key: 'timeout' | 'connect-timeout', text: string) => {
    const ms = parseDuration(text);
    if (ms === 0) diagnostics.push(zeroTimeoutWarning(`\`${key}\` of app \`${name}\``, text, locatePath(source, [...path, key])));
    return ms;
  };
  const base = {
    name,
    roots: raw.roots === false ? (false as const) : (raw.roots ?? [context.artifacts]).map((root) => resolve(context.dir, root)),
    location: locatePath(source, path, 'key'),
    ...(raw.protocol !== undefined && raw.protocol !== 'auto' && { protocol: raw.protocol }),
    ...(raw.concurrency !== undefined && { concurrency: raw.concurrency }),
    ...(raw.rate !== undefined && { rate: parseRate(raw.rate) }),
    ...(raw.timeout !== undefined && { timeoutMs: readTimeout('timeout', raw.timeout) }),
    ...(raw['max-log'] !== undefined && { maxLogBytes: parseSize(raw['max-log']) }),
    ...(raw['max-result'] !== undefined && { maxResultBytes: parseSize(raw['max-result']) }),
    ...(raw['connect-timeout'] !== undefined && { connectTimeoutMs: readTimeout('connect-timeout', raw['connect-timeout']) }),
  };
  if (raw.command !== undefined) {
    if (raw.headers !== undefined) reportMisplacedKey('headers', 'url', declaration, diagnostics);
    if (raw.transport !== undefined) reportMisplacedKey('transport', 'url', declaration, diagnostics);
    if (raw.auth !== undefined) reportMisplacedKey('auth', 'url', declaration, diagnostics);
    const args = (raw.args ?? []).map((arg, i) => expand(arg, ['args', i]));
    const cwd = resolve(context.dir, raw.cwd ?? '.');
    return {
      ...base,
      ...(raw.roots === undefined && { roots: defaultRoots(context.artifacts, args, cwd) }),
      transport: 'stdio',
      command: raw.command,
      args,
      env: expandMap(raw.env, 'env'),
      cwd,
      ...(raw['stop-timeout'] !== undefined && { stopTimeoutMs: parseDuration(raw['stop-timeout']) }),
    };
  }
  for (const key of STDIO_ONLY_KEYS) if (raw[key] !== undefined) reportMisplacedKey(key, 'command', declaration, diagnostics);
  const url = expand(raw.url!, ['url']);
  if (!isHttpUrl(url)) {
    diagnostics.push({
      location: locatePath(source, [...path, 'url']),
      message: `${where(['url'])}: expected an http:// or https:// URL, got \`${url}\``,
    });
  }
  const auth = raw.auth === undefined ? undefined : normalizeAuth(declaration, { dir: context.dir, artifacts: context.artifacts, env: context.env, expand }, diagnostics);
  return { ...base, transport: raw.transport === 'sse' ? 'sse' : 'http', url, headers: expandMap(raw.headers, 'headers'), ...(auth && { auth }) };
}

function reportMisplacedKey(key: string, belongsWith: 'url' | 'command', declaration: AppDeclaration, diagnostics: Diagnostic[]): void {
  const kind = belongsWith === 'url' ? 'Streamable HTTP apps (with `url`)' : 'stdio apps (with `command`)';
  diagnostics.push({
    location: locatePath(declaration.source, [...declaration.path, key], 'key'),
    message: `\`${key}\` applies only to ${kind}, and app \`${declaration.name}\` is not one`,
  });
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expands `${NAME}` and `${NAME:-default}` from `env`; `$NAME` without braces
 * stays as written. An unset NAME without a default is reported through
 * `onMissing` (with its offset in `text`) and expands to the empty string.
 */
export function expandVariables(text: string, env: NodeJS.ProcessEnv, onMissing: (name: string, offset: number) => void): string {
  if (!text.includes('${')) return text;
  return text.replace(VARIABLE, (_match, name: string, fallback: string | undefined, offset: number) => {
    const value = env[name];
    if (fallback !== undefined) return value === undefined || value === '' ? fallback : value;
    if (value === undefined) onMissing(name, offset);
    return value ?? '';
  });
}

/**
 * The values to mask, each with the name it came from: each secret name's
 * value in the environment, and the value of an app's `env` or `headers`
 * entry of that name (which may be written literally in the config), longest
 * first so a longer secret is masked before a part of it.
 */
function collectSecretEntries(secrets: string[], env: NodeJS.ProcessEnv, apps: Record<string, AppConfig>, fromAuth: SecretEntry[]): SecretEntry[] {
  const byValue = new Map<string, string>();
  for (const name of secrets) {
    const value = env[name];
    if (value && !byValue.has(value)) byValue.set(value, name);
    for (const app of Object.values(apps)) {
      const fromApp = app.transport === 'stdio' ? app.env[name] : app.headers[name];
      if (fromApp && !byValue.has(fromApp)) byValue.set(fromApp, name);
    }
  }
  // `auth:` secrets (a client secret, a bearer token) are masked whether or not `secrets` lists them.
  for (const { name, value } of fromAuth) if (!byValue.has(value)) byValue.set(value, name);
  return [...byValue].map(([value, name]) => ({ name, value })).sort((a, b) => b.value.length - a.value.length);
}

/** A secret in a stdio app's `args` is visible to every user of the machine (`ps`): say so at load. */
function warnSecretsInArgs(declarations: AppDeclaration[], apps: Record<string, AppConfig>, secrets: SecretEntry[]): Diagnostic[] {
  const warnings: Diagnostic[] = [];
  for (const declaration of declarations) {
    const app = apps[declaration.name];
    if (app?.transport !== 'stdio') continue;
    for (const [index, arg] of app.args.entries()) {
      const secret = secrets.find((entry) => arg.includes(entry.value));
      if (!secret) continue;
      warnings.push({
        location: locatePath(declaration.source, [...declaration.path, 'args', index]),
        message: `app \`${declaration.name}\` gets the secret ${secret.name} in its \`args\`, where any user of this machine can read it in the process list`,
        hint: `pass it through the app's \`env\` instead: env: { ${secret.name}: \${${secret.name}} }`,
      });
    }
  }
  return warnings;
}
