import { createPrivateKey } from 'node:crypto';
import {
  computeScopeUnion,
  createPrivateKeyJwtAuth,
  type AddClientAuthentication,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { ClientCredentialsAppAuth } from '../config/types.js';

/**
 * Machine-to-machine tokens for `auth: { type: client-credentials }`, kept in
 * memory for the connection. The client authenticates with its secret, or
 * with a JWT signed by its private key (`private_key_jwt`, RFC 7523). Asks for the configured scopes (or, with none,
 * what the SDK picks from the server's metadata), plus any scope a
 * `403 insufficient_scope` challenge named: the SDK then steps up by itself.
 * The client is pinned to the first authorization server it is used with, so
 * the secret never goes to a second one during the connection.
 */
export class ClientCredentialsTokens implements OAuthClientProvider {
  private client: StoredOAuthClientInformation;
  private current: StoredOAuthTokens | undefined;
  private stepUpScope: string | undefined;
  private readonly configuredScope: string | undefined;
  private readonly authMethod: string;
  /** Set for `private-key`: the SDK calls it to add the signed assertion to each token request. */
  readonly addClientAuthentication: AddClientAuthentication | undefined;

  constructor(
    config: ClientCredentialsAppAuth,
    private readonly onSecret: (value: string) => void,
  ) {
    this.client = { client_id: config.clientId, ...(config.clientSecret !== undefined && { client_secret: config.clientSecret }) };
    this.configuredScope = config.scopes.join(' ') || undefined;
    this.authMethod = config.privateKey === undefined ? 'client_secret_basic' : 'private_key_jwt';
    this.addClientAuthentication =
      config.privateKey === undefined
        ? undefined
        : createPrivateKeyJwtAuth({ issuer: config.clientId, subject: config.clientId, privateKey: config.privateKey, alg: config.algorithm ?? algorithmFor(config.privateKey) });
  }

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'runner',
      redirect_uris: [],
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: this.authMethod,
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
    this.onSecret(tokens.access_token);
    this.current = tokens;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.current = undefined;
  }

  /** Called for each `insufficient_scope` challenge, before the SDK asks for a new token. */
  addStepUpScope(scope: string): void {
    this.stepUpScope = computeScopeUnion(this.stepUpScope, scope);
  }

  prepareTokenRequest(scope?: string): URLSearchParams {
    const asked = this.configuredScope === undefined ? scope : computeScopeUnion(this.configuredScope, this.stepUpScope);
    return new URLSearchParams({ grant_type: 'client_credentials', ...(asked && { scope: asked }) });
  }

  redirectToAuthorization(): void {
    throw new Error('client credentials have no authorization redirect');
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw new Error('client credentials have no PKCE code verifier');
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
