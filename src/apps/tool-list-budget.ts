import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { passReceived, watchSent } from './transport-taps.js';
import { formatBytes } from '../config/sizes.js';

/**
 * The MCP client gathers every page of a tool list (up to 64) before it
 * answers, and each page may be as large as one message (`max-result`): a
 * hostile app could make runner hold 64 times that. This tap counts the pages
 * of one listing together (a request without a cursor starts a new one) and
 * turns the page that goes past `limitBytes` into an error answer, which ends
 * the listing: the pages before it are dropped with it.
 *
 * Taps `send` now and `onmessage` when `tapReceive` is called (after connect:
 * the client sets `onmessage` while connecting). `refused` says why the last
 * listing was refused, until the next one starts.
 */
export class ToolListBudget {
  refused: string | undefined;
  private readonly listing = new Set<string | number>();
  private charsSoFar = 0;

  constructor(private readonly limitBytes: number) {}

  tapSend(transport: Transport): void {
    watchSent(transport, (message) => {
      if (!('method' in message) || message.method !== 'tools/list' || !('id' in message)) return;
      if ((message.params as { cursor?: unknown } | undefined)?.cursor === undefined) {
        this.listing.clear();
        this.charsSoFar = 0;
        this.refused = undefined;
      }
      this.listing.add(message.id);
    });
  }

  tapReceive(transport: Transport): void {
    passReceived(transport, (message) => ('id' in message && !('method' in message) && this.listing.delete(message.id!) ? this.weigh(message) : message));
  }

  /** A page of the listing as it is, or an error answer in its place once the pages so far are over the limit. */
  private weigh(message: JSONRPCMessage): JSONRPCMessage {
    if (!('result' in message)) return message;
    // Once per page of a tool list: small for any real app; a page near max-result costs one more serialization.
    this.charsSoFar += JSON.stringify(message.result).length;
    if (this.charsSoFar <= this.limitBytes) return message;
    this.refused = `its tool list is larger than its max-result of ${formatBytes(this.limitBytes)} (all its pages together)`;
    this.charsSoFar = 0;
    return { jsonrpc: '2.0', id: message.id, error: { code: -32603, message: this.refused } };
  }
}
