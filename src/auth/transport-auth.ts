import { auth, extractWWWAuthenticateParams, withDpop, type AuthProvider, type FetchLike, type OAuthClientProvider } from '@modelcontextprotocol/client';
import type { Clock } from '../clock.js';
import type { AppAuth, SecretEntry } from '../config/types.js';
import { LoginRequiredError } from './auth-errors.js';
import { CredentialsFile } from './credentials-file.js';
import { challengeNamesDpop } from './dpop.js';
import { MachineTokens } from './machine-tokens.js';
import { StoredOAuthProvider } from './stored-oauth-provider.js';

/** What an HTTP transport needs for an app's `auth:`: spread into StreamableHTTPClientTransport (or SSE) options. */
export interface TransportAuth {
  authProvider?: AuthProvider | OAuthClientProvider;
  fetch: FetchLike;
}

export interface TransportAuthOptions {
  /** The values every output is masked with: token values are added to it, in place, as they are learned. */
  secretValues: readonly string[];
  /** The secrets the run store keeps as references by name: token values are added here too. */
  secretEntries?: readonly SecretEntry[];
  clock?: Clock;
}

/**
 * The transport's side of an app's `auth:`. `oauth`: the stored tokens, a
 * refresh (one at a time per app) when the server answers 401, a login hint
 * when there is nothing to refresh, `insufficient_scope` challenges
 * remembered for the next login, and a DPoP proof on every request when the
 * tokens are bound to a key. `client-credentials`, `workload-identity`,
 * `enterprise-managed`: tokens from the credentials or assertion, which the
 * SDK gets (and steps up to a wider scope, and binds with DPoP) on its own.
 * `bearer`: the static token.
 */
export function createTransportAuth(app: { name: string; url: string; auth?: AppAuth }, fetch: FetchLike, options: TransportAuthOptions): TransportAuth {
  const tokenName = `RUNNER_AUTH_${app.name}_TOKEN`.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
  const onSecret = (value: string) => {
    addLongestFirst(options.secretValues, value, (item) => item);
    if (options.secretEntries) addLongestFirst(options.secretEntries, { name: tokenName, value }, (item) => item.value);
  };
  switch (app.auth?.type) {
    case undefined:
      return { fetch };
    case 'bearer': {
      const token = app.auth.token;
      return { authProvider: { token: () => Promise.resolve(token) }, fetch };
    }
    case 'client-credentials':
    case 'workload-identity':
    case 'enterprise-managed': {
      const provider = new MachineTokens(app.auth, { app: app.name, onSecret, fetch });
      const noticing: FetchLike = async (url, init) => {
        const response = await fetch(url, init);
        if (challengeNamesDpop(response)) provider.noteDpopChallenge();
        return response;
      };
      return { authProvider: provider, fetch: rememberScopeChallenges(noticing, (scope) => provider.addStepUpScope(scope)) };
    }
    case 'oauth': {
      const credentials = new CredentialsFile(app.auth.credentialsFile, options.clock);
      const provider = new StoredOAuthProvider({ app: app.name, url: app.url, auth: app.auth, credentials, clock: options.clock, onSecret });
      const key = `${credentials.path}\n${app.url}\n${app.name}`;
      return {
        authProvider: {
          token: () => provider.accessToken(),
          onUnauthorized: (context) => once(key, () => reauthorize(provider, context)),
        },
        // Innermost, as the SDK composes it: the DPoP scheme and a fresh proof replace `Bearer` when the tokens are bound.
        fetch: rememberScopeChallenges(
          withDpop(() => provider.boundSession(), () => provider.dpopBoundToken())(fetch),
          (scope) => provider.addStepUpScope(scope),
        ),
      };
    }
  }
}

/** What the transport hands `onUnauthorized` (the SDK does not export the type by name). */
type UnauthorizedContext = Parameters<NonNullable<AuthProvider['onUnauthorized']>>[0];

const refreshing = new Map<string, Promise<void>>();

/**
 * Runs `work` unless the same app's is already running, then joins it: ten
 * calls that meet an expired token at once must not spend the same refresh
 * token ten times (a rotating server revokes the whole login on reuse).
 */
function once(key: string, work: () => Promise<void>): Promise<void> {
  let running = refreshing.get(key);
  if (!running) {
    running = work().finally(() => refreshing.delete(key));
    refreshing.set(key, running);
  }
  return running;
}

/** The SDK's answer to a 401 (what its own adapter does): refresh the stored tokens, or, headless, fail with the login hint. */
async function reauthorize(provider: StoredOAuthProvider, context: UnauthorizedContext): Promise<void> {
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(context.response);
  const result = await auth(provider, { serverUrl: context.serverUrl, resourceMetadataUrl, scope, fetchFn: context.fetchFn });
  if (result !== 'AUTHORIZED') throw new LoginRequiredError('not-logged-in', 'needs a login');
}

/** A fetch that passes each `403 insufficient_scope` challenge's scope to `onChallenge` before the transport acts on it. */
function rememberScopeChallenges(fetch: FetchLike, onChallenge: (scope: string) => unknown): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (response.status === 403) {
      const { error, scope } = extractWWWAuthenticateParams(response);
      if (error === 'insufficient_scope' && scope) await Promise.resolve(onChallenge(scope)).catch(() => undefined);
    }
    return response;
  };
}

/**
 * Adds a secret to a list in place, keeping it longest first: masking reads
 * the list on each call, so a token learned mid-run is masked from then on in
 * the record, the results, the run store and the logs.
 */
function addLongestFirst<T>(list: readonly T[], item: T, valueOf: (item: T) => string): void {
  const value = valueOf(item);
  if (value.length === 0 || list.some((existing) => valueOf(existing) === value)) return;
  const mutable = list as T[];
  const at = mutable.findIndex((existing) => valueOf(existing).length < value.length);
  mutable.splice(at === -1 ? mutable.length : at, 0, item);
}
