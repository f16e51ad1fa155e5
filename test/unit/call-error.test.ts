import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { CallAbortReason, CallError, classifyCallError, describeCauses } from '../../src/apps/call-error.js';
import { LEGACY_VERDICT_TTL_MS, VerdictStore } from '../../src/apps/verdicts.js';
import type { AppConfig } from '../../src/config/types.js';

const sent = { app: 'sheet', sent: true };
const notSent = { app: 'sheet', sent: false };

describe('classifyCallError: what a failed request was, and whether it may have had an effect', () => {
  it('keeps a CallError as it is', () => {
    const error = new CallError('input', 'bad arguments');
    expect(classifyCallError(error, sent)).toBe(error);
    expect(error.outcome).toBe('not-sent');
    expect(new CallError('tool', 'isError').outcome).toBe('answered');
  });

  it('a JSON-RPC error answer is `protocol`, answered, with its code', () => {
    const error = classifyCallError(new ProtocolError(-32602, 'Invalid params'), sent);
    expect(error).toMatchObject({ kind: 'protocol', outcome: 'answered', rpcCode: -32602 });
    expect(error.message).toBe('sheet answered with JSON-RPC error -32602: Invalid params');
  });

  it("a result the MCP client refuses (it breaks the tool's outputSchema) is `protocol`, answered, and not said to be the app's JSON-RPC error", () => {
    const refused = new ProtocolError(-32602, "Structured content does not match the tool's output schema: data/s must match pattern \"^[a-z]+$\"");
    const error = classifyCallError(refused, sent);
    expect(error).toMatchObject({ kind: 'protocol', outcome: 'answered', rpcCode: -32602 });
    expect(error.message).toBe('the result from sheet was refused: Structured content does not match the tool\'s output schema: data/s must match pattern "^[a-z]+$"');
    const missing = classifyCallError(new ProtocolError(-32600, 'Tool write has an output schema but did not return structured content'), sent);
    expect(missing.message).toBe('the result from sheet was refused: Tool write has an output schema but did not return structured content');
    // A schema the result breaks may be the app's passing fault; a check stopped by its time limit would stop again.
    expect([error.refusedByLimit, missing.refusedByLimit]).toEqual([false, false]);
    const stopped = new ProtocolError(-32602, "Structured content does not match the tool's output schema: checking it was stopped after 1000ms: a `pattern` in the schema backtracks too much on this value");
    expect(classifyCallError(stopped, sent)).toMatchObject({ kind: 'protocol', refusedByLimit: true });
  });

  it('the call signal’s reason decides timeout or cancelled; sent or not decides unknown or not-sent', () => {
    const controller = new AbortController();
    controller.abort(new CallAbortReason('timeout', 'sheet.write did not finish within 1s (timeout)'));
    const aborted = new Error('This operation was aborted');
    expect(classifyCallError(aborted, { ...sent, signal: controller.signal })).toMatchObject({ kind: 'timeout', outcome: 'unknown' });
    expect(classifyCallError(aborted, { ...notSent, signal: controller.signal })).toMatchObject({ kind: 'timeout', outcome: 'not-sent' });
    const cancelled = new AbortController();
    cancelled.abort(new CallAbortReason('cancelled', 'the run was cancelled'));
    expect(classifyCallError(aborted, { ...sent, signal: cancelled.signal })).toMatchObject({ kind: 'cancelled', message: 'the run was cancelled' });
  });

  it('SDK errors: a request timeout, a lost connection and one never connected', () => {
    expect(classifyCallError(new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out'), sent)).toMatchObject({ kind: 'timeout', outcome: 'unknown' });
    expect(classifyCallError(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'), sent)).toMatchObject({ kind: 'transport', outcome: 'unknown' });
    expect(classifyCallError(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'), notSent)).toMatchObject({ kind: 'transport', outcome: 'not-sent' });
    // Not connected: nothing could have been sent, whatever the caller believes.
    expect(classifyCallError(new SdkError(SdkErrorCode.NotConnected, 'Not connected'), sent)).toMatchObject({ kind: 'transport', outcome: 'not-sent' });
  });

  it('an AbortError without a reason is `cancelled`; anything else is the transport failing', () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(classifyCallError(abort, sent)).toMatchObject({ kind: 'cancelled', outcome: 'unknown' });
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7431'), { code: 'ECONNREFUSED' }) });
    expect(classifyCallError(refused, notSent)).toMatchObject({ kind: 'transport', outcome: 'not-sent', message: 'sheet: fetch failed' });
    expect(classifyCallError('a string', sent)).toMatchObject({ kind: 'transport', message: 'sheet: a string' });
  });

  it('describeCauses joins the chain of causes once each', () => {
    const error = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:7431') });
    expect(describeCauses(error)).toBe('fetch failed: connect ECONNREFUSED 127.0.0.1:7431');
    expect(describeCauses(new Error('same', { cause: new Error('same') }))).toBe('same');
    expect(describeCauses(undefined)).toBe('unknown error');
  });

  it('describeCauses shows what a thrown non-Error says, never [object Object]', () => {
    expect(describeCauses({ message: 'quota exceeded', code: 'E_QUOTA' })).toBe('quota exceeded');
    expect(describeCauses({ code: 'ECONNRESET' })).toBe('ECONNRESET');
    expect(describeCauses({ status: 503, retry: true })).toBe('{"status":503,"retry":true}');
    expect(describeCauses({ detail: 'x'.repeat(500) })).toMatch(/^\{"detail":"x+\.\.\.$/);
    expect(describeCauses({ detail: 'x'.repeat(500) })).toHaveLength(200);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(describeCauses(cyclic)).toBe('an object with self');
    expect(describeCauses({})).toBe('an empty object');
    expect(describeCauses(new Error('fetch failed', { cause: { code: 'UND_ERR_SOCKET' } }))).toBe('fetch failed: UND_ERR_SOCKET');
    expect(describeCauses(Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' }))).toBe('ECONNREFUSED');
    expect(describeCauses(42)).toBe('42');
  });
});

describe('VerdictStore: each app’s protocol era, remembered across runs', () => {
  const stdio = (args: string[]): AppConfig => ({ transport: 'stdio', command: 'node', args, cwd: '/p', env: {} }) as unknown as AppConfig;
  const http = (url: string): AppConfig => ({ transport: 'http', url, headers: {} }) as unknown as AppConfig;

  it('keeps verdicts in a file, by how the app is launched or where it lives', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'runner-verdicts-')), 'state', 'verdicts.json');
    const store = new VerdictStore(file);
    store.set(stdio(['a.js']), { kind: 'legacy' });
    store.set(http('http://127.0.0.1:7431/mcp'), { kind: 'legacy' });
    const again = new VerdictStore(file);
    expect(again.get(stdio(['a.js']))).toEqual({ kind: 'legacy' });
    expect(again.get(stdio(['b.js']))).toBeUndefined();
    expect(again.get(http('http://127.0.0.1:7431/mcp'))).toEqual({ kind: 'legacy' });
    again.delete(stdio(['a.js']));
    expect(new VerdictStore(file).get(stdio(['a.js']))).toBeUndefined();
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toHaveLength(1);
  });

  it('trusts a legacy verdict for a day only: an upgraded server is probed again', () => {
    let now = 1_000_000;
    const store = new VerdictStore(null, () => now);
    store.set(stdio(['a.js']), { kind: 'legacy' });
    now += LEGACY_VERDICT_TTL_MS;
    expect(store.get(stdio(['a.js']))).toEqual({ kind: 'legacy' });
    now += 1;
    expect(store.get(stdio(['a.js']))).toBeUndefined();
  });

  it('a corrupt or unwritable file costs a probe, never a failure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-verdicts-'));
    const corrupt = join(dir, 'verdicts.json');
    writeFileSync(corrupt, '{ not json');
    expect(new VerdictStore(corrupt).get(stdio(['a.js']))).toBeUndefined();
    const unwritable = new VerdictStore(join(corrupt, 'below-a-file.json'));
    expect(() => unwritable.set(stdio(['a.js']), { kind: 'legacy' })).not.toThrow();
    expect(unwritable.get(stdio(['a.js']))).toEqual({ kind: 'legacy' });
  });
});
