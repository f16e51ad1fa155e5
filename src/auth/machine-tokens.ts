import { createPrivateKey } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import {
  computeScopeUnion,
  createPrivateKeyJwtAuth,
  discoverAndRequestJwtAuthGrant,
  requestJwtAuthorizationGrant,
  OAuthError,
  type AddClientAuthentication,
  type DpopSession,
  type FetchLike,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { describeCauses } from '../apps/call-error.js';
import type { CredentialSource, MachineAppAuth } from '../config/types.js';
import { AuthError } from './auth-errors.js';
import { createDpopKey, dpopAlgorithmFor, wantsDpop } from './dpop.js';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** An assertion or ID token file is a few KiB; anything past this is not one. */
const MAX_CREDENTIAL_FILE_BYTES = 64 * 1024;

export interface MachineTokensOptions {
  /** The app's name, for messages. */
  app: string;
  /** Called with every secret the provider learns (tokens, assertions, grants), so it can be masked. */
  onSecret: (value: string) => void;
  /** The fetch for the identity provider's token exchange (enterprise-managed). */
  fetch: FetchLike;
}

/** The grant of one machine-to-machine auth type: what the client says it is, and how it asks for a token. */
interface Grant {
  grantType: string;
  authMethod: string;
  addClientAuthentication?: AddClientAuthentication;
  parameters(scope: string | undefined): Promise<Record<string, string>>;
}

/**
 * Machine-to-machine tokens, kept in memory for the connection, for the auth
 * types that need no person: `client-credentials` (a secret, or a JWT signed
 * with the client's private key), `workload-identity` (the platform's JWT for
 * this workload, RFC 7523) and `enterprise-managed` (the user's ID token,
 * exchanged at the identity provider for an ID-JAG, then at the MCP server's
 * authorization server for a token). The SDK's `auth()` drives the flow;
 * this provider says which grant to use. Asks for the configured scopes
 * (or, with none, what the SDK picks from the server's metadata), plus any
 * scope a `403 insufficient_scope` challenge named: the SDK then steps up by
 * itself. With `dpop`, tokens are bound to a key made for the connection.
 * The client is pinned to the first authorization server it is used with, so
 * its credentials never go to a second one during the connection.
 */
export class MachineTokens implements OAuthClientProvider {
  private client: StoredOAuthClientInformation;
  private current: StoredOAuthTokens | undefined;
  private stepUpScope: string | undefined;
  private readonly configuredScope: string | undefined;
  private readonly grant: Grant;
  private dpopChallenged = false;
  private dpopSession: Promise<DpopSession> | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private authorizationServer: string | undefined;
  private resource: string | undefined;

  constructor(
    private readonly config: MachineAppAuth,
    private readonly options: MachineTokensOptions,
  ) {
    this.client = { client_id: config.clientId, ...('clientSecret' in config && config.clientSecret !== undefined && { client_secret: config.clientSecret }) };
    this.configuredScope = config.scopes.join(' ') || undefined;
    this.grant = this.grantFor(config);
  }

  /** Set for `private-key`: the SDK calls it to add the signed assertion to each token request. */
  get addClientAuthentication(): AddClientAuthentication | undefined {
    return this.grant.addClientAuthentication;
  }

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'runner',
      redirect_uris: [],
      grant_types: [this.grant.grantType],
      token_endpoint_auth_method: this.grant.authMethod,
      ...(this.configuredScope !== undefined && { scope: this.configuredScope }),
    };
  }

  /** The configured client, pinned (the SDK's issuer stamp) to the first authorization server discovery names for this connection. */
  clientInformation(context?: OAuthClientInformationContext): StoredOAuthClientInformation {
    if (this.client.issuer === undefined && context) this.client = { ...this.client, issuer: context.issuer };
    return this.client;
  }

  saveClientInformation(client: StoredOAuthClientInformation): void {
    this.client = client;
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.current;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.options.onSecret(tokens.access_token);
    this.current = tokens;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.current = undefined;
  }

  /** Called for each `insufficient_scope` challenge, before the SDK asks for a new token. */
  addStepUpScope(scope: string): void {
    this.stepUpScope = computeScopeUnion(this.stepUpScope, scope);
  }

  /** Called when the server's challenge names the DPoP scheme: with `dpop: auto`, tokens are bound from then on. */
  noteDpopChallenge(): void {
    this.dpopChallenged = true;
  }

  /** The DPoP session to sign token requests and MCP requests with, when tokens are to be bound (the SDK asks before each). */
  dpop(): Promise<DpopSession> | undefined {
    if (!this.dpopSession && wantsDpop(this.config.dpop, this.dpopChallenged)) {
      this.dpopSession = createDpopKey(dpopAlgorithmFor(this.discovery?.authorizationServerMetadata)).then(({ session }) => session);
    }
    return this.dpopSession;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  /** The SDK says which authorization server and resource the token is for: the ID-JAG is asked for them. */
  saveAuthorizationServerUrl(url: string): void {
    this.authorizationServer = url;
  }

  saveResourceUrl(url: string): void {
    this.resource = url;
  }

  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const asked = this.configuredScope === undefined ? scope : computeScopeUnion(this.configuredScope, this.stepUpScope);
    return new URLSearchParams({ ...(await this.grant.parameters(asked)), ...(asked && { scope: asked }) });
  }

  redirectToAuthorization(): void {
    throw new Error(`${this.config.type} has no authorization redirect`);
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw new Error(`${this.config.type} has no PKCE code verifier`);
  }

  private grantFor(config: MachineAppAuth): Grant {
    switch (config.type) {
      case 'client-credentials':
        return config.privateKey === undefined
          ? { grantType: 'client_credentials', authMethod: 'client_secret_basic', parameters: () => Promise.resolve({ grant_type: 'client_credentials' }) }
          : {
              grantType: 'client_credentials',
              authMethod: 'private_key_jwt',
              addClientAuthentication: createPrivateKeyJwtAuth({ issuer: config.clientId, subject: config.clientId, privateKey: config.privateKey, alg: config.algorithm ?? algorithmFor(config.privateKey) }),
              parameters: () => Promise.resolve({ grant_type: 'client_credentials' }),
            };
      case 'workload-identity':
        return {
          grantType: JWT_BEARER,
          authMethod: 'none',
          parameters: async () => ({ grant_type: JWT_BEARER, assertion: await this.read(config.assertion, 'assertion') }),
        };
      case 'enterprise-managed':
        return {
          grantType: JWT_BEARER,
          authMethod: 'client_secret_basic',
          parameters: async (scope) => ({ grant_type: JWT_BEARER, assertion: await this.identityAssertionGrant(config, scope) }),
        };
    }
  }

  /** The ID-JAG: the user's ID token exchanged at the identity provider (RFC 8693) for a grant to this server's authorization server. */
  private async identityAssertionGrant(config: Extract<MachineAppAuth, { type: 'enterprise-managed' }>, scope: string | undefined): Promise<string> {
    if (!this.authorizationServer || !this.resource) {
      throw new AuthError(`app \`${this.options.app}\` names no protected resource metadata, which enterprise-managed authorization needs (RFC 9728)`, undefined);
    }
    const idToken = await this.read(config.idToken, 'id-token');
    let grant: string;
    try {
      const exchange = {
        audience: this.authorizationServer,
        resource: this.resource,
        idToken,
        clientId: config.idpClientId,
        ...(config.idpClientSecret !== undefined && { clientSecret: config.idpClientSecret }),
        ...(scope && { scope }),
        fetchFn: this.options.fetch,
      };
      ({ jwtAuthGrant: grant } =
        'issuer' in config.idp
          ? await discoverAndRequestJwtAuthGrant({ idpUrl: config.idp.issuer, ...exchange })
          : await requestJwtAuthorizationGrant({ tokenEndpoint: config.idp.tokenEndpoint, ...exchange }));
    } catch (error) {
      const said = error instanceof OAuthError ? `${error.code}${error.message && error.message !== error.code ? ` (${error.message})` : ''}` : describeCauses(error);
      const reason = said.replace(/\s+/g, ' ').slice(0, 300);
      const idp = 'issuer' in config.idp ? config.idp.issuer : config.idp.tokenEndpoint;
      throw new AuthError(
        `the identity provider ${idp} did not exchange the ID token of app \`${this.options.app}\` for a grant: ${reason}; check \`auth.id-token\` (an ID token expires: get a fresh one) and \`auth.idp-client-id\``,
        error,
      );
    }
    this.options.onSecret(grant);
    return grant;
  }

  /** A credential from the config, or read again from its file (platforms rotate them), trimmed and masked. */
  private async read(source: CredentialSource, key: string): Promise<string> {
    if ('value' in source) return source.value;
    let text: string;
    try {
      const info = await stat(source.file);
      if (info.size > MAX_CREDENTIAL_FILE_BYTES) throw new Error(`it has ${info.size} bytes, more than the ${MAX_CREDENTIAL_FILE_BYTES} a token file can have`);
      text = (await readFile(source.file, 'utf8')).trim();
      if (text === '') throw new Error('it is empty');
    } catch (error) {
      throw new AuthError(`app \`${this.options.app}\`: cannot read \`auth.${key}-file\` ${source.file}: ${(error as Error).message}`, error);
    }
    this.options.onSecret(text);
    return text;
  }
}

/** The usual JWT algorithm for a PEM key's type: RS256 for RSA, ES256/384/512 by EC curve, EdDSA for Ed25519. */
function algorithmFor(pem: string): string {
  let key;
  try {
    key = createPrivateKey(pem);
  } catch {
    return 'RS256'; // not readable here: the SDK says why when it signs
  }
  if (key.asymmetricKeyType === 'ec') return { secp384r1: 'ES384', secp521r1: 'ES512' }[key.asymmetricKeyDetails?.namedCurve ?? ''] ?? 'ES256';
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  return 'RS256';
}
