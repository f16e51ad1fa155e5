import { parseJSONRPCMessage, SERVER_INFO_META_KEY, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { isJsonObject } from '../is-record.js';

// The SDK checks each message from an app against its JSON-RPC schema: a zod
// union that tries a request, then a notification, then a response, and
// rebuilds the message, at about a twentieth of a call's CPU. Nearly every
// message is the answer to a call: `{ jsonrpc, id, result }`, the result with
// at most the server's name and version in its `_meta`. For exactly that shape
// the check below gives the schema's value (the same keys in the same order)
// by hand; anything else goes to the SDK, so what is refused, and how, is the
// SDK's. test/unit/jsonrpc-message.test.ts compares the two.

/** A message as the SDK's schema gives it back: {@link plainResultResponse} first, then the schema. */
export function checkMessage(value: unknown): JSONRPCMessage {
  return plainResultResponse(value) ?? parseJSONRPCMessage(value);
}

/**
 * A result response rebuilt as the schema rebuilds it, or undefined when
 * `value` is anything else: another message, another key, an id the schema
 * might refuse, a `_meta` with more than the server's name and version.
 */
export function plainResultResponse(value: unknown): JSONRPCMessage | undefined {
  if (!isJsonObject(value) || value.jsonrpc !== '2.0' || Object.keys(value).length !== 3) return undefined;
  const { id, result } = value;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  // The schema copies the result key by key: `__proto__` would not survive the copy.
  if (!isJsonObject(result) || Object.hasOwn(result, '__proto__')) return undefined;
  if (!Object.hasOwn(result, '_meta')) return { jsonrpc: '2.0', id: id as string | number, result };
  const meta = serverInfoMeta(result._meta);
  if (!meta) return undefined;
  // The schema's own key comes first, then the others in the order they came.
  const rebuilt: Record<string, unknown> = { _meta: meta };
  for (const key of Object.keys(result)) if (key !== '_meta') rebuilt[key] = result[key];
  return { jsonrpc: '2.0', id: id as string | number, result: rebuilt };
}

/** The fields of a server's description that are plain strings, in the schema's order. */
const SERVER_INFO_FIELDS = ['name', 'title', 'version', 'websiteUrl', 'description'];

/** `{ serverInfo: { name, version, ... } }` rebuilt, or undefined for any other `_meta`. */
export function serverInfoMeta(meta: unknown): Record<string, unknown> | undefined {
  if (!isJsonObject(meta) || Object.keys(meta).length !== 1) return undefined;
  const info = meta[SERVER_INFO_META_KEY];
  if (!isJsonObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string') return undefined;
  const keys = Object.keys(info);
  if (!keys.every((key) => SERVER_INFO_FIELDS.includes(key) && typeof info[key] === 'string')) return undefined;
  const rebuilt: Record<string, unknown> = {};
  for (const key of SERVER_INFO_FIELDS) if (Object.hasOwn(info, key)) rebuilt[key] = info[key];
  return { [SERVER_INFO_META_KEY]: rebuilt };
}
