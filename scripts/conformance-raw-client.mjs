#!/usr/bin/env node
// A reference client for the conformance suite, straight on the v2 SDK
// (@modelcontextprotocol/client), with no runner in between:
//
//   node scripts/conformance-raw-client.mjs <server-url>
//
// It does the same work as scripts/conformance-runner-client.mjs (same tools,
// arguments and answers, from conformance-scenarios.mjs), so the table of
// scripts/conformance.mjs shows what runner adds or loses against the SDK.
// On failure the last stderr line is `raw-client: <reason>`.
import {
  Client,
  ClientCredentialsProvider,
  CrossAppAccessProvider,
  DpopSession,
  PrivateKeyJwtProvider,
  requestJwtAuthorizationGrant,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { callsFromTools, ELICIT_ANSWERS, knownCalls, readContext } from './conformance-scenarios.mjs';

const REDIRECT_URL = 'http://localhost:3000/callback';
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Authorization rounds per operation: the first login, then a step-up. */
const AUTH_ROUNDS = 3;

/** An in-memory OAuth client whose "browser" fetches the authorization URL and keeps the code from the redirect. */
class FetchingOAuthProvider {
  #client;
  #tokens;
  #verifier;
  pending;

  constructor(preRegistered) {
    this.#client = preRegistered;
  }
  get redirectUrl() {
    return REDIRECT_URL;
  }
  get clientMetadataUrl() {
    return this.#client ? undefined : CLIENT_METADATA_URL;
  }
  get clientMetadata() {
    return {
      client_name: 'raw-sdk-client',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...(this.#client?.client_secret ? {} : { token_endpoint_auth_method: 'none' }),
    };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens) {
    this.#tokens = tokens;
  }
  saveCodeVerifier(verifier) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'tokens') this.#tokens = undefined;
    if (scope === 'all' || scope === 'client') this.#client = undefined;
  }
  async redirectToAuthorization(authorizationUrl) {
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (!location) throw new Error(`the authorization endpoint answered ${response.status} without a redirect`);
    const params = new URL(location).searchParams;
    if (!params.get('code')) throw new Error(`the redirect carried no code: ${params.get('error') ?? location}`);
    this.pending = { code: params.get('code'), iss: params.get('iss') ?? undefined };
  }
}

/** The JWT-bearer grant (RFC 7523) with the workload identity assertion the scenario hands out. */
function createJwtBearerProvider(context) {
  let tokens;
  return {
    redirectUrl: undefined,
    clientMetadata: { client_name: 'raw-sdk-client', redirect_uris: [], grant_types: [JWT_BEARER], token_endpoint_auth_method: 'none' },
    clientInformation: () => ({ client_id: context.client_id }),
    tokens: () => tokens,
    saveTokens: (saved) => (tokens = saved),
    redirectToAuthorization: () => Promise.reject(new Error('the JWT-bearer grant has no redirect')),
    saveCodeVerifier: () => undefined,
    codeVerifier: () => '',
    prepareTokenRequest: (scope) => new URLSearchParams({ grant_type: JWT_BEARER, assertion: context.valid_jwt, ...(scope && { scope }) }),
  };
}

function createAuthProvider(scenario, context) {
  if (scenario === 'auth/wif-jwt-bearer') return createJwtBearerProvider(context);
  if (scenario === 'auth/enterprise-managed-authorization' || scenario === 'auth/cross-app-access-complete-flow') {
    // The IdP's ID token becomes an ID-JAG (token exchange), which the MCP authorization server trades for a token.
    return new CrossAppAccessProvider({
      clientId: context.client_id,
      clientSecret: context.client_secret,
      assertion: async (ctx) =>
        (await requestJwtAuthorizationGrant({
          tokenEndpoint: context.idp_token_endpoint,
          audience: ctx.authorizationServerUrl,
          resource: ctx.resourceUrl,
          idToken: context.idp_id_token,
          clientId: context.idp_client_id,
          scope: ctx.scope,
          fetchFn: ctx.fetchFn,
        })).jwtAuthGrant,
    });
  }
  if (scenario === 'auth/client-credentials-basic') return new ClientCredentialsProvider({ clientId: context.client_id, clientSecret: context.client_secret });
  if (scenario === 'auth/client-credentials-jwt') {
    return new PrivateKeyJwtProvider({ clientId: context.client_id, privateKey: context.private_key_pem, algorithm: context.signing_algorithm ?? 'ES256' });
  }
  if (!scenario.startsWith('auth/')) return undefined;
  const preRegistered = context.client_id ? { client_id: context.client_id, client_secret: context.client_secret, redirect_uris: [REDIRECT_URL] } : undefined;
  const provider = new FetchingOAuthProvider(preRegistered);
  if (scenario.startsWith('auth/dpop')) {
    const session = DpopSession.create();
    provider.dpop = () => session;
  }
  return provider;
}

function protocolOptions() {
  const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
  if (process.env.RUNNER_CONFORMANCE_PROTOCOL === 'auto' || !version) return { versionNegotiation: { mode: 'auto' } };
  // The SDK pins only 2026-era revisions; a dated 2025 one means the plain `initialize` handshake.
  return { versionNegotiation: { mode: version >= '2026' ? { pin: version } : 'legacy' } };
}

async function main() {
  const url = new URL(process.argv.at(-1));
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const context = readContext();
  const authProvider = createAuthProvider(scenario, context);
  const answers = ELICIT_ANSWERS[scenario];
  const client = new Client(
    { name: 'raw-sdk-client', version: '1.0.0' },
    { capabilities: { elicitation: { form: { applyDefaults: true } } }, ...protocolOptions() },
  );
  client.setRequestHandler('elicitation/create', async () => (answers ? { action: 'accept', content: { ...answers } } : { action: 'decline' }));

  let transport;
  const connect = async () => {
    transport = new StreamableHTTPClientTransport(url, authProvider ? { authProvider, onInsufficientScope: 'reauthorize' } : {});
    await client.connect(transport);
  };
  // An operation that meets a 401 (or a step-up 403) finishes the authorization the provider started, then runs again.
  const authorized = async (operation) => {
    for (let round = 1; ; round++) {
      try {
        return await operation();
      } catch (error) {
        const pending = authProvider?.pending;
        if (!(error instanceof UnauthorizedError) || !pending || round >= AUTH_ROUNDS) throw error;
        authProvider.pending = undefined;
        await transport.finishAuth(pending.code, pending.iss);
        if (!client.transport) await connect();
      }
    }
  };

  await authorized(connect);
  try {
    let calls = knownCalls(scenario, context);
    if (!calls) calls = callsFromTools(scenario, (await authorized(() => client.listTools())).tools);
    else await authorized(() => client.listTools());
    for (const call of calls) {
      const result = await authorized(() => client.callTool(call));
      if (result.isError) process.stderr.write(`raw-client: ${call.name} answered isError: ${JSON.stringify(result.content).slice(0, 200)}\n`);
    }
  } finally {
    await client.close().catch(() => undefined);
  }
}

try {
  await main();
} catch (error) {
  process.stderr.write(`raw-client: ${error?.message ?? error}\n`);
  process.exitCode = 1;
}
