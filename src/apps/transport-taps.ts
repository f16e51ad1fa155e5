import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';

// Watching what passes through an MCP client's transport without changing the
// SDK: the runner wraps `send` (before connect) and `onmessage` (after connect:
// the client sets it while connecting). Each tap wraps the one before it.

/** Calls `watch` with each message before the transport sends it. */
export function watchSent(transport: Transport, watch: (message: JSONRPCMessage) => void): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    watch(message);
    return send(message, options);
  };
}

/** Passes each message the transport receives through `pass`, which may put another in its place. Does nothing before connect. */
export function passReceived(transport: Transport, pass: (message: JSONRPCMessage) => JSONRPCMessage): void {
  const receive = transport.onmessage as ((message: JSONRPCMessage, extra?: unknown) => void) | undefined;
  if (!receive) return;
  transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => receive(pass(message), extra);
}
