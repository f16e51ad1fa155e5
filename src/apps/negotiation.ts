import { SdkError, SdkErrorCode, type ClientOptions, type PriorDiscovery, type Transport } from '@modelcontextprotocol/client';
import type { AppConfig } from '../config/types.js';
import type { VerdictStore } from './verdicts.js';
import { watchSent } from './transport-taps.js';

// How a connection picks its protocol era, and when a failed start is worth
// one more try. The rule: negotiation never makes a reachable server
// unreachable. The probe (`server/discover`) waits as long as the connect
// timeout allows; a probe answered with an HTTP error, garbage or nothing
// falls back to a plain `initialize` once; `protocol:` pins an era and skips
// the probe.

/** The protocol version of the 2026 era, reached through `server/discover`. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

const LEGACY: PriorDiscovery = { kind: 'legacy' };

/** How one connection negotiates. */
export interface NegotiationPlan {
  /** The client's negotiation options. */
  clientOptions: Pick<ClientOptions, 'versionNegotiation' | 'supportedProtocolVersions'>;
  /** A verdict that skips the probe: remembered, or known (legacy SSE). */
  prior?: PriorDiscovery;
  /** Whether a probe's verdict is remembered for the next connection (auto only). */
  remember: boolean;
}

/**
 * The plan for an app: a pinned 2026 version sends `server/discover` and
 * fails unless offered it; a pinned 2025 version sends only `initialize`,
 * offering that version alone; a legacy HTTP+SSE server predates
 * `server/discover`, so it is not probed; anything else probes (or reuses the
 * remembered verdict).
 */
export function planNegotiation(app: AppConfig, verdicts: VerdictStore): NegotiationPlan {
  if (app.protocol === MODERN_PROTOCOL_VERSION) return { clientOptions: { versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } } }, remember: false };
  if (app.protocol !== undefined) return { clientOptions: { supportedProtocolVersions: [app.protocol] }, remember: false };
  if (app.transport === 'sse') return { clientOptions: {}, prior: LEGACY, remember: false };
  const prior = verdicts.get(app);
  return { clientOptions: { versionNegotiation: { mode: 'auto' } }, ...(prior && { prior }), remember: true };
}

/**
 * Whether a failed first start gets a second one, and with which verdict:
 * `undefined` means no. A stale remembered verdict is dropped and tried
 * again; a stdio app that exits on the in-place probe is a 2025 server; an
 * HTTP server whose probe failed (HTTP error, garbage, no answer, but not
 * "nothing listens there" or an authorization wall) gets `initialize`.
 */
export function planRetry(app: AppConfig, plan: NegotiationPlan, error: unknown, initializeSent: boolean): { prior: PriorDiscovery | undefined } | undefined {
  if (!plan.remember || plan.prior?.kind === 'legacy') return undefined;
  if (app.transport === 'stdio') return { prior: LEGACY };
  if (plan.prior?.kind === 'modern') return { prior: undefined };
  return !initializeSent && isProbeFailure(error) ? { prior: LEGACY } : undefined;
}

/** Errors the SDK raises for a probe that got an unusable answer or none. */
function isProbeFailure(error: unknown): boolean {
  if (!(error instanceof SdkError)) return false;
  if (error.code !== SdkErrorCode.EraNegotiationFailed && error.code !== SdkErrorCode.RequestTimeout) return false;
  return !isUnreachable(error);
}

/** Connection refused or no such host: `initialize` would find no one either. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function isUnreachable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    current = current.cause;
  }
  return false;
}

/** Watches a transport for the `initialize` request: a failure after it is the handshake's, not the probe's. */
export function watchForInitialize(transport: Transport): () => boolean {
  let sent = false;
  watchSent(transport, (message) => {
    if ('method' in message && message.method === 'initialize') sent = true;
  });
  return () => sent;
}
