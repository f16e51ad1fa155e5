// A small OAuth 2.1 authorization server on 127.0.0.1 for the auth tests:
// RFC 8414 metadata, RFC 7591 registration, authorization code + PKCE (S256)
// with an auto-approving consent and RFC 9207 `iss`, refresh tokens that
// rotate, client_credentials, RFC 7009 revocation, RFC 8707 resource
// indicators; optionally DPoP-bound tokens (RFC 9449) and the JWT-bearer
// grant (RFC 7523) for a workload's JWT or an identity provider's ID-JAG.
// `verify` is what a protected server asks about a token.
import { createHash, randomBytes, verify as verifySignature } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, json, readBody } from './http-json.js';
import type { AddressInfo } from 'node:net';
import { OAuthError, OAuthErrorCode, type AuthInfo } from '@modelcontextprotocol/server';
import { decodeJwt, decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { checkDpopProof } from './dpop-proof.js';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** Who may sign a JWT-bearer grant: a workload's platform, or an enterprise identity provider (ID-JAG). */
export interface TrustedAssertionIssuer {
  issuer: string;
  /** SPKI PEM of its ES256 key. */
  publicKey: string;
  kind: 'workload' | 'id-jag';
}

export interface AuthServerOptions {
  /** Lifetime of access tokens. @default 3600 */
  accessTokenTtlSeconds?: number;
  scopes?: string[];
  /** Pre-registered clients (client_credentials, JWT-bearer): with a secret, a public key (PEM) for `private_key_jwt`, or neither (public). */
  clients?: { id: string; secret?: string; publicKey?: string; scopes: string[] }[];
  /** Advertise DPoP and bind tokens to the key of a token request's DPoP proof. */
  dpop?: boolean;
  /** Accept the JWT-bearer grant with assertions these issuers signed. */
  assertionIssuers?: TrustedAssertionIssuer[];
}

interface Client {
  id: string;
  secret?: string;
  publicKey?: string;
  redirectUris: string[];
  method: string;
  scopes?: string[];
}

interface Grant {
  id: string;
  clientId: string;
  scopes: string[];
  resource?: string;
  refreshToken?: string;
  revoked: boolean;
  /** The DPoP key thumbprint the grant's tokens are bound to. */
  jkt?: string;
}

interface AccessToken {
  grantId: string;
  clientId: string;
  scopes: string[];
  resource?: string;
  expiresAtMs: number;
  revoked: boolean;
  jkt?: string;
}

/** What the server saw, for tests to assert on. */
export interface AuthServerLog {
  registrations: { clientId: string; redirectUris: string[]; method: string }[];
  authorizations: { clientId: string; scope: string; resource?: string; codeChallengeMethod?: string; redirectUri: string }[];
  tokenRequests: {
    grantType: string;
    clientId?: string;
    scope?: string;
    resource?: string;
    assertionAlg?: string;
    /** The thumbprint of the DPoP proof's key, when the request carried one. */
    dpopJkt?: string;
    /** The `sub` of a JWT-bearer assertion. */
    assertionSubject?: string;
    error?: string;
  }[];
  revocations: number;
}

export interface AuthServer {
  issuer: string;
  metadata: Record<string, unknown>;
  log: AuthServerLog;
  /** The protected server's check: throws OAuthError invalid_token for an unknown or revoked token. */
  verify(token: string): AuthInfo;
  /** The DPoP key thumbprint a token is bound to, if it is. */
  boundKey(token: string): string | undefined;
  /** Accepts `token` as a bearer token for `resource` (never expires). */
  addStaticToken(token: string, scopes: string[], resource: string): void;
  /** Makes every access token issued so far expired (refresh tokens stay good). */
  expireAccessTokens(): void;
  close(): Promise<void>;
}

export async function startAuthServer(options: AuthServerOptions = {}): Promise<AuthServer> {
  const ttl = options.accessTokenTtlSeconds ?? 3600;
  const supported = options.scopes ?? ['notes.read', 'notes.write'];
  const clients = new Map<string, Client>(
    (options.clients ?? []).map((c) => [c.id, { id: c.id, secret: c.secret, publicKey: c.publicKey, redirectUris: [], method: c.publicKey ? 'private_key_jwt' : 'client_secret_basic', scopes: c.scopes }]),
  );
  const codes = new Map<string, { clientId: string; redirectUri: string; challenge: string; scopes: string[]; resource?: string; used: boolean }>();
  const grants = new Map<string, Grant>();
  const refreshTokens = new Map<string, string>(); // token → grant id
  const tokens = new Map<string, AccessToken>();
  const log: AuthServerLog = { registrations: [], authorizations: [], tokenRequests: [], revocations: 0 };
  const random = () => randomBytes(24).toString('base64url');

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => json(res, 500, { error: 'server_error', error_description: error.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const metadata = {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    revocation_endpoint: `${issuer}/revoke`,
    scopes_supported: supported,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    token_endpoint_auth_signing_alg_values_supported: ['ES256', 'ES384', 'RS256'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    ...(options.dpop && { dpop_signing_alg_values_supported: ['ES256', 'RS256'] }),
  };
  if (options.assertionIssuers) metadata.grant_types_supported.push(JWT_BEARER);

  function issue(grant: Grant, withRefresh: boolean) {
    const access = random();
    tokens.set(access, { grantId: grant.id, clientId: grant.clientId, scopes: grant.scopes, resource: grant.resource, expiresAtMs: Date.now() + ttl * 1000, revoked: false, jkt: grant.jkt });
    const body: Record<string, unknown> = { access_token: access, token_type: grant.jkt ? 'DPoP' : 'Bearer', expires_in: ttl, scope: grant.scopes.join(' ') };
    if (withRefresh) {
      if (grant.refreshToken) refreshTokens.delete(grant.refreshToken);
      grant.refreshToken = random();
      refreshTokens.set(grant.refreshToken, grant.id);
      body.refresh_token = grant.refreshToken;
    }
    return body;
  }

  function revokeGrant(grant: Grant) {
    grant.revoked = true;
    for (const token of tokens.values()) if (token.grantId === grant.id) token.revoked = true;
  }

  /** Client authentication: Basic, client_secret_post, a JWT signed with the client's key, or a public client naming itself. */
  function authenticate(req: IncomingMessage, form: URLSearchParams): Client | undefined {
    if (form.get('client_assertion_type') === 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') return checkAssertion(form.get('client_assertion') ?? '');
    const header = req.headers.authorization;
    let id = form.get('client_id') ?? undefined;
    let secret = form.get('client_secret') ?? undefined;
    if (header?.startsWith('Basic ')) {
      const [user, pass] = Buffer.from(header.slice(6), 'base64').toString().split(':');
      id = decodeURIComponent(user ?? '');
      secret = decodeURIComponent(pass ?? '');
    }
    const client = id ? clients.get(id) : undefined;
    if (!client || client.publicKey) return undefined;
    if (client.secret !== undefined && client.secret !== secret) return undefined;
    return client;
  }

  /** RFC 7523 client authentication: iss = sub = a client with a public key, aud = this server, a good signature, not expired. */
  function checkAssertion(jwt: string): Client | undefined {
    const [head, body, signature] = jwt.split('.');
    if (!head || !body || !signature) return undefined;
    const header = JSON.parse(Buffer.from(head, 'base64url').toString()) as { alg?: string };
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as { iss?: string; sub?: string; aud?: string | string[]; exp?: number };
    const client = clients.get(claims.iss ?? '');
    if (!client?.publicKey || claims.sub !== client.id || (claims.exp ?? 0) * 1000 < Date.now()) return undefined;
    if (![claims.aud].flat().some((aud) => aud === issuer || aud === `${issuer}/` || aud === `${issuer}/token`)) return undefined;
    const hash = { ES256: 'sha256', ES384: 'sha384', RS256: 'sha256' }[header.alg ?? ''];
    if (!hash) return undefined;
    const key = { key: client.publicKey, ...(header.alg!.startsWith('ES') && { dsaEncoding: 'ieee-p1363' as const }) };
    if (!verifySignature(hash, Buffer.from(`${head}.${body}`), key, Buffer.from(signature, 'base64url'))) return undefined;
    log.tokenRequests.at(-1)!.assertionAlg = header.alg;
    return client;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', issuer);
    if (req.method === 'GET' && url.pathname === '/.well-known/oauth-authorization-server') return json(res, 200, metadata);
    if (req.method === 'POST' && url.pathname === '/register') {
      const body = JSON.parse(await readBody(req)) as { redirect_uris?: string[]; token_endpoint_auth_method?: string; client_name?: string };
      if (!Array.isArray(body.redirect_uris) || body.redirect_uris.length === 0) return json(res, 400, { error: 'invalid_redirect_uri' });
      const method = body.token_endpoint_auth_method ?? 'client_secret_basic';
      const client: Client = { id: `client-${random().slice(0, 8)}`, redirectUris: body.redirect_uris, method, ...(method !== 'none' && { secret: random() }) };
      clients.set(client.id, client);
      log.registrations.push({ clientId: client.id, redirectUris: client.redirectUris, method });
      return json(res, 201, { ...body, client_id: client.id, client_id_issued_at: Math.floor(Date.now() / 1000), token_endpoint_auth_method: method, ...(client.secret && { client_secret: client.secret }) });
    }
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const q = url.searchParams;
      const client = clients.get(q.get('client_id') ?? '');
      const redirectUri = q.get('redirect_uri') ?? '';
      if (!client || !client.redirectUris.includes(redirectUri)) return json(res, 400, { error: 'invalid_request', error_description: 'unknown client or redirect_uri' });
      const back = new URL(redirectUri);
      back.searchParams.set('state', q.get('state') ?? '');
      back.searchParams.set('iss', issuer);
      const challenge = q.get('code_challenge');
      if (q.get('response_type') !== 'code' || !challenge || q.get('code_challenge_method') !== 'S256') {
        back.searchParams.set('error', 'invalid_request');
      } else {
        const scopes = (q.get('scope') ?? '').split(' ').filter((s) => supported.includes(s));
        const code = random();
        const resource = q.get('resource') ?? undefined;
        codes.set(code, { clientId: client.id, redirectUri, challenge, scopes, resource, used: false });
        log.authorizations.push({ clientId: client.id, scope: scopes.join(' '), resource, codeChallengeMethod: q.get('code_challenge_method') ?? undefined, redirectUri });
        back.searchParams.set('code', code);
      }
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const form = new URLSearchParams(await readBody(req));
      const grantType = form.get('grant_type') ?? '';
      const entry: AuthServerLog['tokenRequests'][number] = { grantType, scope: form.get('scope') ?? undefined, resource: form.get('resource') ?? undefined };
      log.tokenRequests.push(entry);
      const fail = (status: number, error: string, description: string) => {
        entry.error = error;
        json(res, status, { error, error_description: description });
      };
      const client = authenticate(req, form);
      if (!client) return fail(401, 'invalid_client', 'unknown client or wrong secret');
      entry.clientId = client.id;
      let jkt: string | undefined;
      if (options.dpop && req.headers.dpop) {
        try {
          jkt = (await checkDpopProof(String(req.headers.dpop), { method: 'POST', url: `${issuer}/token` })).jkt;
        } catch (error) {
          return fail(400, 'invalid_dpop_proof', (error as Error).message);
        }
        entry.dpopJkt = jkt;
      }
      if (grantType === 'authorization_code') {
        const code = codes.get(form.get('code') ?? '');
        if (!code || code.used || code.clientId !== client.id) return fail(400, 'invalid_grant', 'unknown or used code');
        code.used = true;
        if (code.redirectUri !== form.get('redirect_uri')) return fail(400, 'invalid_grant', 'redirect_uri differs');
        const verifier = form.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== code.challenge) return fail(400, 'invalid_grant', 'PKCE verification failed');
        if (code.resource && form.get('resource') && form.get('resource') !== code.resource) return fail(400, 'invalid_target', 'resource differs');
        const grant: Grant = { id: random(), clientId: client.id, scopes: code.scopes, resource: code.resource, revoked: false, jkt };
        grants.set(grant.id, grant);
        return json(res, 200, issue(grant, true));
      }
      if (grantType === 'refresh_token') {
        const grant = grants.get(refreshTokens.get(form.get('refresh_token') ?? '') ?? '');
        if (!grant || grant.revoked || grant.clientId !== client.id) return fail(400, 'invalid_grant', 'refresh token revoked, used or unknown');
        const asked = form.get('scope')?.split(' ').filter(Boolean);
        if (asked?.some((s) => !grant.scopes.includes(s))) return fail(400, 'invalid_scope', 'a refresh cannot widen the scope');
        if (grant.jkt && grant.jkt !== jkt) return fail(400, 'invalid_grant', 'the refresh token is bound to another DPoP key');
        return json(res, 200, issue(grant, true));
      }
      if (grantType === 'client_credentials') {
        if ((!client.secret && !client.publicKey) || !client.scopes) return fail(400, 'unauthorized_client', 'not a confidential client');
        const asked = (form.get('scope') ?? client.scopes.join(' ')).split(' ').filter(Boolean);
        if (asked.some((s) => !client.scopes!.includes(s))) return fail(400, 'invalid_scope', `client may have ${client.scopes.join(' ')}`);
        const grant: Grant = { id: random(), clientId: client.id, scopes: asked, resource: form.get('resource') ?? undefined, revoked: false, jkt };
        grants.set(grant.id, grant);
        return json(res, 200, issue(grant, false));
      }
      if (grantType === JWT_BEARER && options.assertionIssuers) {
        const assertion = form.get('assertion') ?? '';
        let claims;
        try {
          const trusted = options.assertionIssuers.find((candidate) => candidate.issuer === decodeJwt(assertion).iss);
          if (!trusted) return fail(400, 'invalid_grant', 'the assertion is from an issuer this server does not trust');
          if (trusted.kind === 'id-jag' && decodeProtectedHeader(assertion).typ !== 'oauth-id-jag+jwt') return fail(400, 'invalid_grant', 'not an ID-JAG');
          ({ payload: claims } = await jwtVerify(assertion, await importSPKI(trusted.publicKey, 'ES256'), { audience: [issuer, `${issuer}/`] }));
          if (trusted.kind === 'id-jag' && claims.client_id !== client.id) return fail(400, 'invalid_grant', 'the ID-JAG is for another client');
        } catch (error) {
          return fail(400, 'invalid_grant', `the assertion is not valid: ${(error as Error).message}`);
        }
        entry.assertionSubject = String(claims.sub);
        const allowed = client.scopes ?? supported;
        const asked = (form.get('scope') ?? (typeof claims.scope === 'string' ? claims.scope : allowed.join(' '))).split(' ').filter(Boolean);
        if (asked.some((s) => !allowed.includes(s))) return fail(400, 'invalid_scope', `client may have ${allowed.join(' ')}`);
        const resource = typeof claims.resource === 'string' ? claims.resource : (form.get('resource') ?? undefined);
        const grant: Grant = { id: random(), clientId: client.id, scopes: asked, resource, revoked: false, jkt };
        grants.set(grant.id, grant);
        return json(res, 200, issue(grant, false));
      }
      return fail(400, 'unsupported_grant_type', grantType);
    }
    if (req.method === 'POST' && url.pathname === '/revoke') {
      const form = new URLSearchParams(await readBody(req));
      const token = form.get('token') ?? '';
      log.revocations++;
      const grant = grants.get(refreshTokens.get(token) ?? '');
      if (grant) revokeGrant(grant);
      const access = tokens.get(token);
      if (access) access.revoked = true;
      res.writeHead(200).end();
      return;
    }
    json(res, 404, { error: 'not_found' });
  }

  return {
    issuer,
    metadata,
    log,
    verify(token) {
      const found = tokens.get(token);
      if (!found || found.revoked) throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown or revoked token');
      return { token, clientId: found.clientId, scopes: found.scopes, expiresAt: Math.floor(found.expiresAtMs / 1000), ...(found.resource && { resource: new URL(found.resource) }) };
    },
    boundKey: (token) => tokens.get(token)?.jkt,
    addStaticToken(token, scopes, resource) {
      tokens.set(token, { grantId: 'static', clientId: 'static', scopes, resource, expiresAtMs: Date.now() + 365 * 86_400_000, revoked: false });
    },
    expireAccessTokens() {
      for (const token of tokens.values()) if (token.grantId !== 'static') token.expiresAtMs = Date.now() - 1000;
    },
    close: () => closeServer(server),
  };
}
