import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { CallError, type CallOutcome } from './call-failure.js';
import { messageOf } from '../errors.js';
import { CallAbortReason } from './abort-reason.js';
import { CHECK_STOPPED } from './bounded-check.js';

export { CallError, type CallErrorOptions, type CallOutcome } from './call-failure.js';

export { CallAbortReason };

const transportCodes = new Set<string>([
  SdkErrorCode.ConnectionClosed,
  SdkErrorCode.NotConnected,
  SdkErrorCode.SendFailed,
  SdkErrorCode.ClientHttpFailedToOpenStream,
  SdkErrorCode.ClientHttpUnexpectedContent,
  SdkErrorCode.ClientHttpNotImplemented,
]);

/** The MCP client's own messages when a tool's result does not pass its `outputSchema`. */
const CLIENT_SIDE_RESULT_CHECK = /^(Structured content does not match the tool's output schema|Failed to validate structured content|Tool .* has an output schema but did not return structured content)/;

/**
 * Turns whatever a request threw into a CallError. `signal` is the call's own
 * signal: when it was aborted, its reason says timeout or cancelled.
 */
export function classifyCallError(error: unknown, context: { app: string; signal?: AbortSignal; sent: boolean }): CallError {
  if (error instanceof CallError) return error;
  const sentOutcome: CallOutcome = context.sent ? 'unknown' : 'not-sent';
  const reason: unknown = context.signal?.aborted ? context.signal.reason : undefined;
  if (reason instanceof CallAbortReason) {
    return new CallError(reason.kind, reason.message, { outcome: sentOutcome, cause: error });
  }
  if (error instanceof ProtocolError && CLIENT_SIDE_RESULT_CHECK.test(error.message)) {
    // Thrown by the MCP client itself, after the app answered: its result broke the tool's outputSchema.
    return new CallError('protocol', `the result from ${context.app} was refused: ${error.message}`, {
      rpcCode: error.code,
      cause: error,
      refusedByLimit: error.message.includes(CHECK_STOPPED),
    });
  }
  if (error instanceof ProtocolError) {
    return new CallError('protocol', `${context.app} answered with JSON-RPC error ${error.code}: ${error.message}`, {
      rpcCode: error.code,
      cause: error,
    });
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) {
      return new CallError('timeout', `${context.app} did not answer in time`, { outcome: sentOutcome, cause: error });
    }
    if (error.code === SdkErrorCode.NotConnected) {
      return new CallError('transport', `${context.app} is not connected: ${error.message}`, { outcome: 'not-sent', cause: error });
    }
    if (transportCodes.has(error.code)) {
      return new CallError('transport', `${context.app} connection lost: ${error.message}`, { outcome: sentOutcome, cause: error });
    }
    return new CallError('protocol', `${context.app}: ${error.message}`, { cause: error });
  }
  const message = messageOf(error);
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) {
    return new CallError('cancelled', `call to ${context.app} was cancelled`, { outcome: sentOutcome, cause: error });
  }
  // fetch failures, EPIPE and friends: the connection itself failed.
  return new CallError('transport', `${context.app}: ${message}`, { outcome: sentOutcome, cause: error });
}

/** An error's message with the messages (or codes) of its causes: `fetch failed: connect ECONNREFUSED 127.0.0.1:7431`. */
export function describeCauses(error: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = error, depth = 0; current && depth < 4; depth++) {
    const message = messageOf(current);
    if (message && !parts.some((part) => part.includes(message))) parts.push(message);
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return parts.join(': ') || 'unknown error';
}
