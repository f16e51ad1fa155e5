// A protected MCP server on 127.0.0.1 for the auth tests, built from the
// server SDK's pieces: `requireBearerAuth` checks each request's token with
// the authorization server (audience: this server's URL, RFC 8707),
// `oauthMetadataResponse` serves RFC 9728 protected resource metadata, and
// `write_note` carries a per-tool scope challenge (403 insufficient_scope).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  createMcpHandler,
  fromJsonSchema,
  getOAuthProtectedResourceMetadataUrl,
  McpServer,
  oauthMetadataResponse,
  requireBearerAuth,
  requireScopes,
  type OAuthMetadata,
} from '@modelcontextprotocol/server';
import type { AuthServer } from './auth-server.js';
import { checkDpopProof } from './dpop-proof.js';

export interface ProtectedApp {
  /** `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** Tokens the server accepted, in order. */
  seenTokens: string[];
  /** The Authorization scheme of each request that carried one. */
  schemes: string[];
  /** The DPoP proofs it accepted (`dpop` mode). */
  proofs: { jkt: string; jti: string }[];
  close(): Promise<void>;
}

const SCOPES = ['notes.read', 'notes.write'];

export interface ProtectedAppOptions {
  /** Serves the protected resource metadata only at this path, not at the well-known one; the 401 names it. */
  metadataPath?: string;
  /** The `scope=` of the 401 challenge sent to a request without a token. */
  challengeScope?: string;
  /** Lets `initialize` and notifications through without a token: the first request challenged is the next one. */
  openInitialize?: boolean;
  /** Requires DPoP-bound tokens with a proof on each request, and challenges with the `DPoP` scheme. */
  dpop?: boolean;
  /** With `dpop`: every proof must carry this nonce (RFC 9449 §9); a proof without it is challenged with `use_dpop_nonce`. */
  dpopNonce?: string;
}

export async function startProtectedApp(authServer: AuthServer, options: ProtectedAppOptions = {}): Promise<ProtectedApp> {
  const seenTokens: string[] = [];
  const schemes: string[] = [];
  const proofs: ProtectedApp['proofs'] = [];
  const handler = createMcpHandler((context) => {
    const server = new McpServer({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: {} } });
    const auth = context.authInfo;
    server.registerTool(
      'whoami',
      { description: 'Who the caller is, and the token it sent (to check that runner masks it).', inputSchema: fromJsonSchema({ type: 'object', properties: {} }), annotations: { readOnlyHint: true, openWorldHint: false } },
      async () => ({ content: [{ type: 'text', text: `client ${auth?.clientId} with scopes ${auth?.scopes.join(' ')}; token ${auth?.token}` }] }),
    );
    server.registerTool(
      'write_note',
      {
        description: 'Writes a note; needs notes.write.',
        inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        scopeChallenge: requireScopes('notes.write'),
      },
      async (args) => ({ content: [{ type: 'text', text: `saved: ${(args as { text: string }).text}` }] }),
    );
    return server;
  });

  const http = createServer((req, res) => {
    serve(req, res).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500).end(error.message);
      else res.destroy(error);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const resourceMetadataUrl = options.metadataPath ? new URL(options.metadataPath, url).href : getOAuthProtectedResourceMetadataUrl(new URL(url));
  const gate = requireBearerAuth({
    verifier: { verifyAccessToken: async (token) => authServer.verify(token) },
    resourceMetadataUrl,
    expectedResource: new URL(url),
  });
  const metadataOptions = { oauthMetadata: authServer.metadata as OAuthMetadata, resourceServerUrl: new URL(url), scopesSupported: SCOPES, resourceName: 'notes' };

  const protectedResourceMetadata = () => ({ resource: url, authorization_servers: [authServer.issuer], scopes_supported: SCOPES, resource_name: 'notes' });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = toWebRequest(req);
    const path = new URL(request.url).pathname;
    if (options.metadataPath && path === options.metadataPath) return send(Response.json(protectedResourceMetadata()), res);
    const metadata = options.metadataPath ? undefined : oauthMetadataResponse(request, metadataOptions);
    if (metadata) return send(metadata, res);
    if (path !== '/mcp') return send(new Response('not found', { status: 404 }), res);
    if (!request.headers.has('authorization') && options.openInitialize && (await isHandshake(request))) return send(await handler.fetch(request), res);
    const authorization = request.headers.get('authorization');
    if (authorization) schemes.push(authorization.split(' ')[0]!);
    if (options.dpop) return send(await serveDpop(request, authorization), res);
    if (!request.headers.has('authorization') && (options.metadataPath || options.challengeScope)) {
      const scope = options.challengeScope ? `, scope="${options.challengeScope}"` : '';
      const challenge = `Bearer error="invalid_token", resource_metadata="${resourceMetadataUrl}"${scope}`;
      return send(Response.json({ error: 'invalid_token' }, { status: 401, headers: { 'www-authenticate': challenge } }), res);
    }
    const auth = await gate(request);
    if (auth instanceof Response) return send(auth, res);
    seenTokens.push(auth.token);
    await send(await handler.fetch(request, { authInfo: auth }), res);
  }

  /** `dpop` mode: a DPoP-bound token and a valid proof for this request (and the nonce, if one is required), or a `DPoP` challenge. */
  async function serveDpop(request: Request, authorization: string | null): Promise<Response> {
    const challenge = (extra = '') => `DPoP algs="ES256 RS256"${extra}, resource_metadata="${resourceMetadataUrl}"`;
    const refuse = (error: string, description: string, headers: Record<string, string> = {}) =>
      Response.json({ error, error_description: description }, { status: 401, headers: { 'www-authenticate': challenge(`, error="${error}"`), ...headers } });
    if (!authorization) return Response.json({ error: 'invalid_token' }, { status: 401, headers: { 'www-authenticate': challenge() } });
    const [scheme, token = ''] = authorization.split(' ');
    if (scheme !== 'DPoP') return refuse('invalid_token', 'this server takes DPoP-bound tokens only');
    let proof;
    try {
      proof = await checkDpopProof(request.headers.get('dpop') ?? undefined, { method: request.method, url: request.url, accessToken: token });
    } catch (error) {
      return refuse('invalid_dpop_proof', (error as Error).message);
    }
    if (options.dpopNonce && proof.nonce !== options.dpopNonce) return refuse('use_dpop_nonce', 'a nonce is required', { 'dpop-nonce': options.dpopNonce });
    if (authServer.boundKey(token) !== proof.jkt) return refuse('invalid_token', 'the token is not bound to the proof\'s key');
    let auth;
    try {
      auth = authServer.verify(token);
    } catch {
      return refuse('invalid_token', 'unknown, expired or revoked token');
    }
    if (auth.expiresAt !== undefined && auth.expiresAt * 1000 < Date.now()) return refuse('invalid_token', 'the token expired');
    proofs.push({ jkt: proof.jkt, jti: proof.jti });
    seenTokens.push(token);
    return handler.fetch(request, { authInfo: auth });
  }

  return {
    url,
    seenTokens,
    schemes,
    proofs,
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** `initialize` or a notification: what the SDK's own example servers let through before asking for a token. */
async function isHandshake(request: Request): Promise<boolean> {
  if (request.method !== 'POST') return false;
  const body = (await request.clone().json().catch(() => undefined)) as { method?: string } | undefined;
  return body?.method === 'initialize' || (body?.method?.startsWith('notifications/') ?? false);
}

function toWebRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, item);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', `http://${req.headers.host}`), {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
    ...(hasBody && { duplex: 'half' }),
  } as RequestInit);
}

async function send(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  res.flushHeaders();
  await pipeline(Readable.fromWeb(response.body as never), res).catch(() => undefined);
}
