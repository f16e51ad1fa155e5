import {
  computeScopeUnion,
  type DpopSession,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { systemClock, type Clock } from '../clock.js';
import type { OAuthAppAuth } from '../config/types.js';
import { LoginRequiredError, type LoginReason } from './auth-errors.js';
import type { CredentialsFile, StoredLogin } from './credentials-file.js';
import { createDpopKey, dpopAlgorithmFor, restoreDpopSession, wantsDpop, type StoredDpopKey } from './dpop.js';

/** What `runner auth login` adds: where the redirect comes back, who shows the authorization URL, and whether the server asked for DPoP. */
export interface LoginSession {
  redirectUrl: string;
  state: string;
  onAuthorizationUrl: (url: URL) => void;
  /** The server's 401 challenge named the DPoP scheme (for `dpop: auto`). */
  dpopChallenged?: boolean;
}

export interface StoredOAuthProviderOptions {
  app: string;
  url: string;
  auth: OAuthAppAuth;
  credentials: CredentialsFile;
  clock?: Clock;
  /** Set by `runner auth login`; without it the provider is headless and never starts a login. */
  login?: LoginSession;
  /** Called with every token value the provider reads or saves, so it can be masked. */
  onSecret?: (value: string) => void;
}

// A run never receives a redirect; the SDK still needs a redirect URL to know this is not a machine-to-machine client.
const HEADLESS_REDIRECT_URL = 'http://127.0.0.1/callback';

/**
 * The SDK's OAuthClientProvider over the per-user credentials file, for one
 * app: tokens and a dynamically registered client persist there (keyed by
 * server URL and app name); PKCE verifier and discovery state live only as
 * long as the login that needs them. Headless (in a run), where the SDK
 * would send the user to the authorization server it throws
 * LoginRequiredError instead, and it never registers a client.
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  readonly clientMetadataUrl: string | undefined;
  private stored: StoredLogin | undefined;
  private loaded = false;
  private configuredClient: StoredOAuthClientInformation | undefined;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private problem: LoginReason = 'not-logged-in';
  private readonly clock: Clock;
  /** A login's new DPoP key, stored with the tokens when they come back bound to it. */
  private newKey: Promise<{ session: DpopSession; stored: StoredDpopKey }> | undefined;
  /** The stored key's session, restored once per key. */
  private restored: { thumbprint: string; session: Promise<DpopSession> } | undefined;

  constructor(private readonly options: StoredOAuthProviderOptions) {
    this.clock = options.clock ?? systemClock;
    this.clientMetadataUrl = isClientMetadataUrl(options.auth.clientId) ? options.auth.clientId : undefined;
  }

  get redirectUrl(): string {
    return this.options.login?.redirectUrl ?? HEADLESS_REDIRECT_URL;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { scopes, clientSecret } = this.options.auth;
    return {
      client_name: 'runner',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: clientSecret ? 'client_secret_basic' : 'none',
      ...(scopes.length > 0 && { scope: scopes.join(' ') }),
    };
  }

  state(): string {
    return this.options.login?.state ?? '';
  }

  async clientInformation(context?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    const { clientId, clientSecret } = this.options.auth;
    if (clientId !== undefined && !this.clientMetadataUrl) {
      // Pinned to the authorization server discovery names first, as the SDK would stamp it (without its warning).
      this.configuredClient ??= { client_id: clientId, ...(clientSecret !== undefined && { client_secret: clientSecret }), ...(context && { issuer: context.issuer }) };
      return this.configuredClient;
    }
    const client = (await this.load()).client;
    if (!this.options.login) {
      if (!client) throw this.loginRequired();
      return client;
    }
    // A client registered for another loopback port would be refused the new redirect: register again.
    const registeredHere = !client || this.clientMetadataUrl !== undefined || !('redirect_uris' in client) || client.redirect_uris.includes(this.redirectUrl);
    return registeredHere ? client : undefined;
  }

  async saveClientInformation(client: StoredOAuthClientInformation): Promise<void> {
    if (this.options.auth.clientId !== undefined && !this.clientMetadataUrl) {
      this.configuredClient = client; // the SDK's issuer stamp; a configured client is never written to the file
      return;
    }
    await this.change((login) => ({ ...login, client }));
  }

  /** The tokens as the SDK's flows read them: always the file's latest, as another runner may have refreshed them. */
  async tokens(): Promise<StoredOAuthTokens | undefined> {
    return (await this.load(true)).tokens;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    const now = this.clock.now();
    this.reveal(tokens);
    // A login keeps its new key only if the tokens are bound to it; a refresh keeps the key the tokens already were.
    const newKey = this.options.login && isDpopBound(tokens) ? (await this.newKey)?.stored : undefined;
    await this.change(({ dpopKey, ...login } = {}) => ({
      ...login,
      tokens,
      savedAt: now,
      expiresAt: tokens.expires_in === undefined ? undefined : now + tokens.expires_in * 1000,
      ...(this.options.login ? newKey && { dpopKey: newKey } : dpopKey && { dpopKey }),
    }));
  }

  /**
   * The DPoP session for token requests (the SDK asks before each). A login
   * makes a new key when `dpop` is `true`, or `auto` and the server's
   * challenge asked for DPoP; a run signs with the key its tokens are bound to.
   */
  async dpop(): Promise<DpopSession | undefined> {
    if (!this.options.login) return this.boundSession();
    if (!this.newKey && wantsDpop(this.options.auth.dpop, this.options.login.dpopChallenged === true)) {
      this.newKey = createDpopKey(dpopAlgorithmFor(this.discovery?.authorizationServerMetadata));
    }
    return (await this.newKey)?.session;
  }

  /** The session of the key the stored tokens are bound to, if they are: every MCP request is signed with it. */
  async boundSession(): Promise<DpopSession | undefined> {
    const { dpopKey } = await this.load();
    if (!dpopKey) return undefined;
    if (this.restored?.thumbprint !== dpopKey.thumbprint) this.restored = { thumbprint: dpopKey.thumbprint, session: restoreDpopSession(dpopKey) };
    return this.restored.session;
  }

  /** The access token when it is DPoP-bound (sent with the `DPoP` scheme and a proof), else undefined (sent as `Bearer`). */
  async dpopBoundToken(): Promise<string | undefined> {
    const { tokens } = await this.load();
    return tokens && isDpopBound(tokens) ? tokens.access_token : undefined;
  }

  /** The access token for the next request; headless, with none stored (or one expired that cannot be refreshed), a LoginRequiredError. */
  async accessToken(): Promise<string> {
    const { tokens, expiresAt } = await this.load();
    if (!tokens) throw this.loginRequired();
    if (!tokens.refresh_token && expiresAt !== undefined && expiresAt <= this.clock.now()) {
      this.problem = 'expired';
      throw this.loginRequired();
    }
    return tokens.access_token;
  }

  /** Remembers a scope a server asked for with `insufficient_scope`, for the next login to ask for too. */
  async addStepUpScope(scope: string): Promise<void> {
    await this.change((login) => ({ ...login, stepUpScope: computeScopeUnion(login?.stepUpScope, scope) }));
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    if (!this.options.login) throw this.loginRequired();
    this.options.login.onAuthorizationUrl(authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no PKCE code verifier: the authorization was not started by this login');
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') this.verifier = undefined;
    if (scope === 'discovery') this.discovery = undefined;
    if (scope === 'client' || scope === 'all') {
      this.configuredClient = undefined;
      await this.change(({ client: _dropped, ...login } = {}) => login);
    }
    if (scope === 'tokens' || scope === 'all') {
      this.problem = 'rejected';
      const rejected = this.stored?.tokens?.access_token;
      // Only the tokens that were rejected: another runner may have saved fresh ones meanwhile.
      await this.change((login = {}) => {
        if (login.tokens?.access_token !== rejected) return login;
        const { tokens: _tokens, expiresAt: _expiresAt, ...rest } = login;
        return rest;
      });
    }
  }

  private loginRequired(): LoginRequiredError {
    const where = `${this.options.url} in ${this.options.credentials.path}`;
    // Tokens on file and still no way in: the refresh failed for a reason other than a rejection.
    const problem = this.problem === 'not-logged-in' && this.stored?.tokens ? 'expired' : this.problem;
    switch (problem) {
      case 'rejected':
        return new LoginRequiredError('rejected', 'has a stored login the authorization server rejected (revoked or expired)');
      case 'expired':
        return new LoginRequiredError('expired', 'has an access token that expired or was refused, and it could not be refreshed');
      default:
        return new LoginRequiredError('not-logged-in', `is not logged in (no token for ${where})`);
    }
  }

  private async load(again = false): Promise<StoredLogin> {
    if (!this.loaded || again) {
      this.stored = await this.options.credentials.read(this.options.url, this.options.app);
      this.loaded = true;
      if (this.stored?.tokens) this.reveal(this.stored.tokens);
    }
    return this.stored ?? {};
  }

  private async change(edit: (login: StoredLogin | undefined) => StoredLogin | undefined): Promise<void> {
    this.stored = await this.options.credentials.update(this.options.url, this.options.app, (login) => {
      const next = edit(login);
      return next && Object.keys(next).length > 0 ? next : undefined;
    });
    this.loaded = true;
  }

  /** Token values are secrets: whoever masks output learns each one as soon as the provider does. */
  private reveal(tokens: StoredOAuthTokens): void {
    for (const value of [tokens.access_token, tokens.refresh_token, tokens.id_token]) if (value) this.options.onSecret?.(value);
  }
}

function isDpopBound(tokens: StoredOAuthTokens): boolean {
  return tokens.token_type?.toLowerCase() === 'dpop';
}

/** A client id that is an https URL with a path names a client ID metadata document (the SDK uses it where the server supports one). */
export function isClientMetadataUrl(clientId: string | undefined): clientId is string {
  if (!clientId) return false;
  try {
    const url = new URL(clientId);
    return url.protocol === 'https:' && url.pathname !== '/';
  } catch {
    return false;
  }
}
