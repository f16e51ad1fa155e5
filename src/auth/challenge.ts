import { Client, extractWWWAuthenticateParams, StreamableHTTPClientTransport, type ClientOptions, type FetchLike } from '@modelcontextprotocol/client';
import { MODERN_PROTOCOL_VERSION } from '../apps/negotiation.js';
import type { Clock } from '../clock.js';
import { challengeNamesDpop } from './dpop.js';

/** What an MCP server's 401 names: where its protected resource metadata is, the scope it wants, and whether it asks for DPoP. */
export interface AuthChallenge {
  resourceMetadataUrl?: URL;
  scope?: string;
  dpop?: boolean;
}

/** The app's default `connect-timeout`. */
const DEFAULT_PROBE_TIMEOUT_MS = 30_000;

export interface ProbeOptions {
  signal?: AbortSignal;
  /** The app's `connect-timeout`. */
  timeoutMs?: number;
  /** The app's `protocol:`; none: negotiate as a run would. */
  protocol?: string;
}

/**
 * Asks the MCP server, without a token, what a run would ask first (the
 * handshake of the app's protocol era, then `tools/list`), and keeps the
 * `WWW-Authenticate` challenge of the first 401 or 403. Some servers name
 * their metadata only there, not at the well-known paths, and the scope in
 * the challenge is the one to ask for first; some let the handshake through
 * and challenge only the next request. Negotiating, a server that refuses
 * the 2026 handshake without a challenge is asked again with `initialize`.
 * Resolves empty when nothing is challenged or the server cannot be
 * reached: discovery then goes its usual way.
 */
export async function probeAuthChallenge(url: string, clock: Clock, options: ProbeOptions = {}): Promise<AuthChallenge> {
  const eras: Pick<ClientOptions, 'versionNegotiation' | 'supportedProtocolVersions'>[] =
    options.protocol === MODERN_PROTOCOL_VERSION
      ? [{ versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } } }]
      : options.protocol !== undefined && options.protocol !== 'auto'
        ? [{ supportedProtocolVersions: [options.protocol] }]
        : [{ versionNegotiation: { mode: 'auto' } }, { versionNegotiation: { mode: 'legacy' } }];
  const timeout = clock.timeout(options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS);
  try {
    for (const era of eras) {
      const challenge = await probeOnce(url, era, options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal);
      if (challenge !== 'no-handshake') return challenge;
    }
    return {};
  } finally {
    timeout.clear();
  }
}

/** One handshake and `tools/list` in one era: the challenge (empty: none), or `no-handshake` when the handshake failed unchallenged. */
async function probeOnce(url: string, era: Pick<ClientOptions, 'versionNegotiation' | 'supportedProtocolVersions'>, probeSignal: AbortSignal): Promise<AuthChallenge | 'no-handshake'> {
  let challenge: AuthChallenge | undefined;
  const recording: FetchLike = async (input, init) => {
    const response = await fetch(input, { ...init, signal: probeSignal });
    if ((response.status === 401 || response.status === 403) && !challenge) {
      const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
      challenge = { ...(resourceMetadataUrl && { resourceMetadataUrl }), ...(scope && { scope }), ...(challengeNamesDpop(response) && { dpop: true }) };
    }
    return response;
  };
  const client = new Client({ name: 'runner', version: '0' }, { capabilities: {}, ...era });
  let connected = false;
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }), { signal: probeSignal });
    connected = true;
    if (!challenge) await client.listTools(undefined, { signal: probeSignal });
  } catch {
    // A challenge ends the probe with an error by design; any other failure leaves discovery to the SDK.
  } finally {
    await client.close().catch(() => undefined);
  }
  if (challenge) return challenge;
  return connected || probeSignal.aborted ? {} : 'no-handshake';
}
