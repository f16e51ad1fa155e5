// An enterprise identity provider on 127.0.0.1 for the enterprise-managed
// authorization tests: OpenID metadata, ID tokens it signs for a user, and
// RFC 8693 token exchange of such an ID token for an identity assertion JWT
// authorization grant (ID-JAG) naming an MCP server's authorization server
// and resource.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, json, readBody } from './http-json.js';
import type { AddressInfo } from 'node:net';
import { exportSPKI, generateKeyPair, jwtVerify, SignJWT } from 'jose';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';

export interface IdentityProvider {
  issuer: string;
  /** Its signing key (SPKI PEM): what an authorization server that trusts it checks grants with. */
  publicKey: string;
  /** The client the MCP client is registered as here. */
  clientId: string;
  /** An ID token for `user`, for `clientId`; `expiresIn` like "1h" or "-1m" (already expired). */
  issueIdToken(user: string, expiresIn?: string): Promise<string>;
  exchanges: { audience?: string; resource?: string; scope?: string; clientId?: string; error?: string }[];
  close(): Promise<void>;
}

export async function startIdentityProvider(options: { clientId?: string; clientSecret?: string; mcpClientId: string }): Promise<IdentityProvider> {
  const clientId = options.clientId ?? 'runner-at-idp';
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const exchanges: IdentityProvider['exchanges'] = [];
  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => json(res, 500, { error: 'server_error', error_description: error.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', issuer);
    if (req.method === 'GET' && (url.pathname === '/.well-known/openid-configuration' || url.pathname === '/.well-known/oauth-authorization-server')) {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
        grant_types_supported: ['authorization_code', TOKEN_EXCHANGE],
      });
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const form = new URLSearchParams(await readBody(req));
      const entry: IdentityProvider['exchanges'][number] = {
        audience: form.get('audience') ?? undefined,
        resource: form.get('resource') ?? undefined,
        scope: form.get('scope') ?? undefined,
        clientId: form.get('client_id') ?? undefined,
      };
      exchanges.push(entry);
      const fail = (error: string, description: string) => {
        entry.error = error;
        json(res, 400, { error, error_description: description });
      };
      if (form.get('grant_type') !== TOKEN_EXCHANGE) return fail('unsupported_grant_type', 'token exchange only');
      if (form.get('client_id') !== clientId || (options.clientSecret !== undefined && form.get('client_secret') !== options.clientSecret)) return fail('invalid_client', 'unknown client');
      if (form.get('subject_token_type') !== ID_TOKEN_TYPE || form.get('requested_token_type') !== ID_JAG_TYPE) return fail('invalid_request', 'an ID token for an ID-JAG only');
      if (!entry.audience || !entry.resource) return fail('invalid_request', 'audience and resource are required');
      let user: string;
      try {
        const { payload } = await jwtVerify(form.get('subject_token') ?? '', publicKey, { issuer, audience: clientId });
        user = String(payload.sub);
      } catch (error) {
        return fail('invalid_grant', `the ID token is not valid: ${(error as Error).message}`);
      }
      const grant = await new SignJWT({ client_id: options.mcpClientId, resource: entry.resource, ...(entry.scope && { scope: entry.scope }) })
        .setProtectedHeader({ alg: 'ES256', typ: 'oauth-id-jag+jwt' })
        .setIssuer(issuer)
        .setSubject(user)
        .setAudience(entry.audience)
        .setIssuedAt()
        .setJti(crypto.randomUUID())
        .setExpirationTime('5m')
        .sign(privateKey);
      return json(res, 200, { access_token: grant, issued_token_type: ID_JAG_TYPE, token_type: 'N_A', expires_in: 300 });
    }
    json(res, 404, { error: 'not_found' });
  }

  return {
    issuer,
    publicKey: await exportSPKI(publicKey),
    clientId,
    exchanges,
    issueIdToken: (user, expiresIn = '1h') => new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setIssuer(issuer).setSubject(user).setAudience(clientId).setIssuedAt().setExpirationTime(expiresIn).sign(privateKey),
    close: () => closeServer(server),
  };
}
