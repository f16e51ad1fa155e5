import { randomBytes } from 'node:crypto';
import { auth, computeScopeUnion, OAuthError } from '@modelcontextprotocol/client';
import { systemClock, type Clock } from '../clock.js';
import type { OAuthAppAuth } from '../config/types.js';
import { RunnerError } from '../errors.js';
import { probeAuthChallenge } from './challenge.js';
import { CredentialsFile, type StoredLogin } from './credentials-file.js';
import { listenForRedirect, type RedirectListener } from './redirect-listener.js';
import { StoredOAuthProvider } from './stored-oauth-provider.js';
import { describeCauses } from '../apps/call-error.js';

/** An app to log in to: its name, URL and `auth: { type: oauth }`. */
export interface OAuthApp {
  name: string;
  url: string;
  auth: OAuthAppAuth;
  /** How long asking the app without a token may take (its `connect-timeout`). */
  connectTimeoutMs?: number;
  /** The app's `protocol:`, for asking it as a run would. */
  protocol?: string;
}

export interface LoginOptions {
  /** Scopes to ask for beyond the config's and those earlier step-up challenges asked for. */
  extraScopes?: string[];
  /** How long to wait for the browser to come back. */
  timeoutMs: number;
  /** Shows the authorization URL (and opens a browser, where there is one). */
  onAuthorizationUrl: (url: URL, redirectUrl: string) => void;
  clock?: Clock;
  signal?: AbortSignal;
}

/**
 * `runner auth login APP`: the authorization code flow with PKCE through the
 * SDK's `auth()`: discovery of the protected resource and its authorization
 * server, a client (configured, a client ID metadata document, or dynamic
 * registration), the authorization URL with the resource indicator, the
 * redirect on a 127.0.0.1 port, the code exchange. Resolves with the login as
 * stored in the credentials file.
 */
export async function loginApp(app: OAuthApp, options: LoginOptions): Promise<StoredLogin> {
  const clock = options.clock ?? systemClock;
  const credentials = new CredentialsFile(app.auth.credentialsFile, clock);
  const before = await credentials.read(app.url, app.name);
  // The 401's challenge may name the metadata (when it is not at a well-known path) and the scope to ask for.
  const challenge = await probeAuthChallenge(app.url, clock, { signal: options.signal, timeoutMs: app.connectTimeoutMs, protocol: app.protocol });
  // Everything granted before stays asked for: a step-up widens the login, it never trades one scope for another.
  const scope = computeScopeUnion(app.auth.scopes.join(' '), before?.tokens?.scope, before?.stepUpScope, challenge.scope, ...(options.extraScopes ?? []));
  const discovered = { resourceMetadataUrl: challenge.resourceMetadataUrl };
  const state = randomBytes(16).toString('base64url');
  const listener = await listenOnRedirectPort(app, before, state);
  const timeout = clock.timeout(options.timeoutMs);
  try {
    let authorizationUrl: URL | undefined;
    const provider = new StoredOAuthProvider({
      app: app.name,
      url: app.url,
      auth: app.auth,
      credentials,
      clock,
      login: { redirectUrl: listener.redirectUrl, state, dpopChallenged: challenge.dpop === true, onAuthorizationUrl: (url) => (authorizationUrl = url) },
    });
    const started = await failingAs(app, () => auth(provider, { serverUrl: app.url, scope, ...discovered, forceReauthorization: true }));
    if (started === 'REDIRECT' && authorizationUrl) {
      options.onAuthorizationUrl(authorizationUrl, listener.redirectUrl);
      const params = await waitFor(listener.received, { timeout: timeout.signal, cancel: options.signal }, options.timeoutMs);
      const denied = params.get('error');
      // The description comes from whoever sent the browser here, possibly not the server: show the code only.
      if (denied !== null) throw new RunnerError('app', `the authorization server did not authorize runner for app \`${app.name}\`: ${denied}`);
      await failingAs(app, () => auth(provider, { serverUrl: app.url, scope, ...discovered, authorizationCode: params.get('code')!, iss: params.get('iss') ?? undefined }));
    }
    const after = await credentials.read(app.url, app.name);
    if (!after?.tokens) throw new RunnerError('app', `the login to app \`${app.name}\` ended without tokens`);
    return after;
  } finally {
    timeout.clear();
    await listener.close();
  }
}

/** Forgets an app's tokens and client registration; resolves with whether there was anything to forget. */
export async function logoutApp(app: OAuthApp, clock?: Clock): Promise<boolean> {
  let existed = false;
  await new CredentialsFile(app.auth.credentialsFile, clock).update(app.url, app.name, (login) => {
    existed = login !== undefined;
    return undefined;
  });
  return existed;
}

/**
 * The redirect's loopback port: the configured one; else the one the stored
 * client was registered with, when it is free, so the login needs no new
 * registration; else any free port (and the SDK registers again).
 */
async function listenOnRedirectPort(app: OAuthApp, before: StoredLogin | undefined, state: string): Promise<RedirectListener> {
  const configured = app.auth.redirectPort;
  if (configured !== undefined) return listenForRedirect({ port: configured, state, app: app.name });
  const registered = registeredPort(before?.client);
  if (registered !== undefined) {
    try {
      return await listenForRedirect({ port: registered, state, app: app.name });
    } catch {
      // Taken by something else now: any port will do.
    }
  }
  return listenForRedirect({ port: 0, state, app: app.name });
}

function registeredPort(client: StoredLogin['client']): number | undefined {
  if (!client || !('redirect_uris' in client)) return undefined;
  for (const uri of client.redirect_uris) {
    const url = URL.canParse(uri) ? new URL(uri) : undefined;
    if (url?.hostname === '127.0.0.1' && url.port !== '') return Number(url.port);
  }
  return undefined;
}

/** Runs a step of the flow; what the SDK throws becomes a RunnerError that says which app and why. */
async function failingAs<T>(app: OAuthApp, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof RunnerError) throw error;
    const reason = error instanceof OAuthError ? `the authorization server refused: ${error.code}${error.message && error.message !== error.code ? ` (${error.message})` : ''}` : describeCauses(error);
    throw new RunnerError('app', `cannot log in to app \`${app.name}\` at ${app.url}: ${reason}`, { cause: error });
  }
}

/** Waits for the redirect, or fails when the login times out (`timeout`) or is interrupted (`cancel`). */
function waitFor<T>(promise: Promise<T>, signals: { timeout: AbortSignal; cancel?: AbortSignal }, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onTimeout = () =>
      reject(
        new RunnerError('app', `no redirect from the authorization server within ${Math.round(timeoutMs / 1000)}s; the login was abandoned`, {
          hint: 'run `runner auth login` again, or give it more time with --timeout',
        }),
      );
    const onCancel = () => reject(new RunnerError('interrupted', 'the login was interrupted'));
    const cleanup = () => {
      signals.timeout.removeEventListener('abort', onTimeout);
      signals.cancel?.removeEventListener('abort', onCancel);
    };
    if (signals.cancel?.aborted) return onCancel();
    signals.timeout.addEventListener('abort', onTimeout, { once: true });
    signals.cancel?.addEventListener('abort', onCancel, { once: true });
    promise.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (error: unknown) => {
        cleanup();
        reject(error);
      },
    );
  });
}

