import { Client, extractWWWAuthenticateParams, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';
import type { Clock } from '../clock.js';

/** What an MCP server's 401 names: where its protected resource metadata is, and the scope it wants. */
export interface AuthChallenge {
  resourceMetadataUrl?: URL;
  scope?: string;
}

const PROBE_TIMEOUT_MS = 10_000;

/**
 * Asks the MCP server, without a token, what a run would ask first
 * (`initialize`, then `tools/list`), and keeps the `WWW-Authenticate`
 * challenge of the first 401 or 403. Some servers name their metadata only
 * there, not at the well-known paths, and the scope in the challenge is the
 * one to ask for first; some let `initialize` through and challenge only the
 * next request. Resolves empty when nothing is challenged or the server
 * cannot be reached: discovery then goes its usual way.
 */
export async function probeAuthChallenge(url: string, clock: Clock, signal?: AbortSignal): Promise<AuthChallenge> {
  const timeout = clock.timeout(PROBE_TIMEOUT_MS);
  const probeSignal = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;
  let challenge: AuthChallenge | undefined;
  const recording: FetchLike = async (input, init) => {
    const response = await fetch(input, { ...init, signal: probeSignal });
    if ((response.status === 401 || response.status === 403) && !challenge) {
      const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
      challenge = { ...(resourceMetadataUrl && { resourceMetadataUrl }), ...(scope && { scope }) };
    }
    return response;
  };
  const client = new Client({ name: 'runner', version: '0' }, { capabilities: {} });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }), { signal: probeSignal });
    if (!challenge) await client.listTools(undefined, { signal: probeSignal });
  } catch {
    // A challenge ends the probe with an error by design; any other failure leaves discovery to the SDK.
  } finally {
    timeout.clear();
    await client.close().catch(() => undefined);
  }
  return challenge ?? {};
}
