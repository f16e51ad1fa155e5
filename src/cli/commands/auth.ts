import { openBrowser } from '../../auth/open-browser.js';
import { readAuthStatus, type AuthStatus } from '../../auth/status.js';
import { systemClock } from '../../clock.js';
import { formatMs, parseDuration } from '../../config/durations.js';
import { loadConfig } from '../../config/load.js';
import { hintFor } from '../../config/schema-diagnostics.js';
import type { AppAuth, AppConfig, RunnerConfig } from '../../config/types.js';
import { ExitCode, RunnerError } from '../../errors.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { reportWarnings } from '../report-error.js';
import { jsonForOutput } from '../../terminal-text.js';

export interface AuthLoginOptions extends GlobalOptions {
  scope: string[];
  /** false with --no-browser. */
  browser: boolean;
  timeout: string;
}

type AuthorizedApp = Exclude<AppConfig, { transport: 'stdio' }> & { auth: AppAuth };

/** How an app whose auth type has no login gets in, for `runner auth login`. */
const NO_LOGIN: Record<Exclude<AppAuth['type'], 'oauth'>, string> = {
  bearer: 'its token is sent as it is',
  'client-credentials': 'each run gets its tokens with the client id and secret (or private key)',
  'workload-identity': 'each run gets its tokens with the workload\'s JWT (`auth.assertion` or `auth.assertion-file`)',
  'enterprise-managed': 'each run exchanges the user\'s ID token at the identity provider, then gets its tokens',
};

/**
 * `runner auth login APP`: prints the authorization URL (and opens a browser
 * when there is one), waits for the redirect on 127.0.0.1, stores the tokens.
 * The URL and progress go to stderr, the outcome to stdout.
 */
export async function authLoginCommand(name: string, options: AuthLoginOptions, io: CliIO): Promise<number> {
  const config = await loadAuthConfig(options, io);
  const app = findAuthorizedApp(config, name);
  if (app.auth.type !== 'oauth') {
    io.stdout(`app \`${name}\` uses \`auth: { type: ${app.auth.type} }\`, which needs no login: ${NO_LOGIN[app.auth.type]}.\n`);
    return ExitCode.succeeded;
  }
  const timeoutMs = parseDuration(options.timeout);
  if (timeoutMs === undefined || timeoutMs === 0) throw new RunnerError('usage', `--timeout: expected a duration like 30s or 5m, got \`${options.timeout}\``);
  // Logging in and out speak OAuth through the MCP SDK, loaded only for them: `auth status` reads a file.
  const { loginApp } = await import('../../auth/login.js');
  const login = await loginApp(
    { name, url: app.url, auth: app.auth, ...(app.connectTimeoutMs !== undefined && { connectTimeoutMs: app.connectTimeoutMs }), ...(app.protocol !== undefined && { protocol: app.protocol }) },
    {
      extraScopes: options.scope,
      timeoutMs,
      onAuthorizationUrl: (url, redirectUrl) => {
        io.stderr(`To log in to app \`${name}\`, open this URL in a browser:\n\n  ${url.href}\n\n`);
        // Only for a person at a terminal: a script or CI reads the URL above instead.
        const opened = options.browser && io.stderrIsTTY && openBrowser(url.href, process.platform, io.env);
        io.stderr(`${opened ? 'A browser was opened. ' : ''}Waiting up to ${formatMs(timeoutMs)} for the redirect to ${redirectUrl} ...\n`);
      },
    },
  );
  const scopes = login.tokens?.scope ? `scopes: ${login.tokens.scope}` : 'no scopes reported';
  const expiry = login.expiresAt === undefined ? '' : `; the access token expires in ${formatMs(Math.max(0, login.expiresAt - systemClock.now()))}${login.tokens?.refresh_token ? ' and is refreshed automatically' : ''}`;
  io.stdout(`Logged in to app \`${name}\` (${scopes}${expiry}).\n`);
  return ExitCode.succeeded;
}

/** `runner auth status [APP]`: each app with `auth:`, its type, whether it is logged in, expiry and scopes; never a token. */
export async function authStatusCommand(name: string | undefined, options: GlobalOptions & { json?: boolean }, io: CliIO): Promise<number> {
  const config = await loadAuthConfig(options, io);
  const apps = name === undefined ? Object.values(config.apps).filter(hasAuth) : [findAuthorizedApp(config, name)];
  const statuses = await Promise.all(apps.map((app) => readAuthStatus({ name: app.name, url: app.url, auth: app.auth })));
  if (options.json) {
    io.stdout(jsonForOutput(statuses));
    return ExitCode.succeeded;
  }
  if (statuses.length === 0) {
    io.stdout('No app in the config has `auth:`.\n');
    return ExitCode.succeeded;
  }
  const width = Math.max(...statuses.map((status) => status.app.length));
  for (const status of statuses) io.stdout(`${status.app.padEnd(width)}  ${status.type.padEnd(18)}  ${describeStatus(status)}\n`);
  const files = [...new Set(statuses.flatMap((status) => (status.credentialsFile ? [status.credentialsFile] : [])))];
  for (const file of files) io.stdout(`tokens are kept in ${file}\n`);
  return ExitCode.succeeded;
}

/** `runner auth logout APP`: deletes the app's stored tokens and client registration. */
export async function authLogoutCommand(name: string, options: GlobalOptions, io: CliIO): Promise<number> {
  const config = await loadAuthConfig(options, io);
  const app = findAuthorizedApp(config, name);
  if (app.auth.type !== 'oauth') {
    io.stdout(`app \`${name}\` uses \`auth: { type: ${app.auth.type} }\`: runner stores nothing for it.\n`);
    return ExitCode.succeeded;
  }
  const { logoutApp } = await import('../../auth/login.js');
  const existed = await logoutApp({ name, url: app.url, auth: app.auth });
  io.stdout(existed ? `Logged out of app \`${name}\`: its tokens and client registration were deleted from ${app.auth.credentialsFile}.\n` : `app \`${name}\` was not logged in.\n`);
  return ExitCode.succeeded;
}

async function loadAuthConfig(options: GlobalOptions, io: CliIO): Promise<RunnerConfig> {
  const config = await loadConfig({ configPath: options.config, cwd: io.cwd, env: io.env });
  reportWarnings(config.warnings, io.stderr);
  return config;
}

function hasAuth(app: AppConfig): app is AuthorizedApp {
  return app.transport !== 'stdio' && app.auth !== undefined;
}

function findAuthorizedApp(config: RunnerConfig, name: string): AuthorizedApp {
  const app = Object.hasOwn(config.apps, name) ? config.apps[name] : undefined;
  if (!app) throw new RunnerError('usage', `no app named \`${name}\` in the config`, { hint: hintFor(name, Object.keys(config.apps), 'apps') });
  if (app.transport === 'stdio') throw new RunnerError('usage', `app \`${name}\` is a stdio app; authorization applies to apps with a \`url\``, { location: app.location });
  if (!hasAuth(app)) {
    throw new RunnerError('usage', `app \`${name}\` has no \`auth:\` in the config`, {
      location: app.location,
      hint: 'give it `auth: { type: oauth }` (or client-credentials, workload-identity, enterprise-managed, bearer) in runner.config.yaml',
    });
  }
  return app;
}

function describeStatus(status: AuthStatus): string {
  const parts: string[] = [];
  const login = `run \`runner auth login ${status.app}\``;
  if (status.state === 'no-login') parts.push(status.type === 'bearer' ? 'no login needed: a static token from the config' : `no login needed: client \`${status.clientId}\` gets tokens in each run (${status.type})`);
  else if (status.state === 'not-logged-in') parts.push(`not logged in: ${login}`);
  else if (status.state === 'expired') parts.push(`token expired and cannot be refreshed: ${login}`);
  else parts.push('logged in');
  if (status.scopes) parts.push(`scopes: ${status.scopes.join(' ')}`);
  if (status.expiresAt && status.state !== 'expired') {
    const leftMs = Date.parse(status.expiresAt) - systemClock.now();
    const when = leftMs > 0 ? `expires in ${formatMs(leftMs)}` : 'expired';
    parts.push(`${when} (${status.expiresAt})${status.refreshable ? ', refreshed automatically' : ''}`);
  }
  if (status.missingScopes) parts.push(`a server asked for scope ${status.missingScopes.join(' ')}: ${login} to grant it`);
  return parts.join('; ');
}
