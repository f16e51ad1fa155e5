import { SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { planNegotiation, planRetry } from '../../src/apps/negotiation.js';
import { VerdictStore } from '../../src/apps/verdicts.js';
import type { AppConfig } from '../../src/config/types.js';

// Which era a connection tries first, and when a failed start gets one more
// try: a probe answered with an HTTP error, garbage or nothing falls back to
// `initialize`; an unreachable server or an authorization wall does not.

const http: AppConfig = { name: 'remote', transport: 'http', url: 'http://127.0.0.1:1/mcp', headers: {}, roots: false };
const stdio: AppConfig = { name: 'local', transport: 'stdio', command: 'node', args: [], env: {}, cwd: '/', roots: false };
const noVerdicts = () => new VerdictStore(null);

const refused = new SdkError(SdkErrorCode.EraNegotiationFailed, 'Version negotiation probe failed: fetch failed', undefined, {
  cause: Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) }),
});

describe('planNegotiation', () => {
  it('probes by default, pins 2026 with server/discover, pins 2025 with initialize alone, and never probes a legacy SSE server', () => {
    expect(planNegotiation(http, noVerdicts())).toEqual({ clientOptions: { versionNegotiation: { mode: 'auto' } }, remember: true });
    expect(planNegotiation({ ...http, protocol: '2026-07-28' }, noVerdicts())).toEqual({
      clientOptions: { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      remember: false,
    });
    expect(planNegotiation({ ...http, protocol: '2025-06-18' }, noVerdicts())).toEqual({ clientOptions: { supportedProtocolVersions: ['2025-06-18'] }, remember: false });
    expect(planNegotiation({ ...http, transport: 'sse' }, noVerdicts())).toEqual({ clientOptions: {}, prior: { kind: 'legacy' }, remember: false });
  });

  it('reuses a remembered verdict', () => {
    const verdicts = noVerdicts();
    verdicts.set(http, { kind: 'legacy' });
    expect(planNegotiation(http, verdicts).prior).toEqual({ kind: 'legacy' });
  });
});

describe('planRetry over HTTP', () => {
  const plan = planNegotiation(http, noVerdicts());

  it.each([
    ['HTTP 500 to the probe', new SdkHttpError(SdkErrorCode.EraNegotiationFailed, 'Version negotiation failed: the server answered the probe with HTTP 500', { status: 500, statusText: 'Internal Server Error' })],
    ['garbage', new SdkError(SdkErrorCode.EraNegotiationFailed, 'unusable reply', undefined, { cause: new SyntaxError('Unexpected token') })],
    ['no answer', new SdkError(SdkErrorCode.RequestTimeout, 'Version negotiation probe timed out after 1000ms', { timeout: 1000 })],
  ])('falls back to initialize after %s', (_what, error) => {
    expect(planRetry(http, plan, error, false)).toEqual({ prior: { kind: 'legacy' } });
  });

  it('does not retry a refused connection, an authorization wall, a pinned era, or a failure after initialize went out', () => {
    expect(planRetry(http, plan, refused, false)).toBeUndefined();
    expect(planRetry(http, plan, new SdkHttpError(SdkErrorCode.ClientHttpAuthentication, 'HTTP 401', { status: 401, statusText: '' }), false)).toBeUndefined();
    const timeout = new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: 1000 });
    expect(planRetry(http, plan, timeout, true)).toBeUndefined();
    expect(planRetry({ ...http, protocol: '2026-07-28' }, planNegotiation({ ...http, protocol: '2026-07-28' }, noVerdicts()), timeout, false)).toBeUndefined();
  });

  it('re-probes once after a stale modern verdict', () => {
    expect(planRetry(http, { ...plan, prior: { kind: 'modern', discover: {} as never } }, refused, true)).toEqual({ prior: undefined });
  });
});

describe('planRetry over stdio', () => {
  it('tries a server that failed on the probe once more as a 2025 server, unless it already was one', () => {
    const plan = planNegotiation(stdio, noVerdicts());
    expect(planRetry(stdio, plan, new Error('Connection closed'), false)).toEqual({ prior: { kind: 'legacy' } });
    expect(planRetry(stdio, { ...plan, prior: { kind: 'legacy' } }, new Error('Connection closed'), true)).toBeUndefined();
  });
});
