import { Client, type CallToolResult, type Request, type RequestMethod, type RequestOptions, type ResultTypeMap, type StandardSchemaV1 } from '@modelcontextprotocol/client';
import { isJsonObject } from '../is-record.js';
import { serverInfoMeta } from './jsonrpc-message.js';

// The SDK checks every `tools/call` result against its era's schema, a zod
// parse that rebuilds the result (and, first, a probe of the schema with
// `undefined`). Most results are a few text blocks, with the server's name and
// version in `_meta` from a 2026 server: for exactly that shape the check
// below gives the same verdict and the same rebuilt value (text blocks
// reduced to `type` and `text`, keys in the schema's order) by hand; any other
// shape, and every failure, goes to the era's own check, so what is accepted,
// what is refused and the message are the SDK's. test/unit/runner-client.test.ts
// compares the two on both eras.

/**
 * A text-only result rebuilt as the era's schema would rebuild it, or
 * undefined when `value` is anything else: other keys (extras, a `_meta` with
 * more than the server's description), other blocks, extra keys on a block,
 * structured content that is not a plain object (the 2025 era refuses it, 2026
 * allows it: the SDK decides).
 */
export function plainTextCallResult(value: unknown): CallToolResult | undefined {
  if (!isJsonObject(value)) return undefined;
  const { content, structuredContent, isError, _meta } = value;
  if (!Array.isArray(content)) return undefined;
  let keys = 1;
  let meta: Record<string, unknown> | undefined;
  if (_meta !== undefined) {
    // A 2026 server stamps its name and version on every result. The 2026 schema rebuilds that description in its
    // own order, the 2025 one keeps it as it came: taken here when the two agree (it came in the schema's order).
    meta = serverInfoMeta(_meta);
    if (!meta || !sameKeyOrder(meta, _meta as Record<string, unknown>)) return undefined;
    keys++;
  }
  if (isError !== undefined) {
    if (typeof isError !== 'boolean') return undefined;
    keys++;
  }
  if (structuredContent !== undefined) {
    // The 2025 schema copies a record key by key: `__proto__` would not survive the copy.
    if (!isJsonObject(structuredContent) || Object.hasOwn(structuredContent, '__proto__')) return undefined;
    keys++;
  }
  if (Object.keys(value).length !== keys) return undefined;
  const blocks: CallToolResult['content'] = [];
  for (const block of content as unknown[]) {
    if (!isJsonObject(block) || block.type !== 'text' || typeof block.text !== 'string' || Object.keys(block).length !== 2) return undefined;
    blocks.push({ type: 'text', text: block.text });
  }
  // Both schemas put `_meta` first.
  const result: CallToolResult = meta ? { _meta: meta, content: blocks } : { content: blocks };
  if (structuredContent !== undefined) result.structuredContent = structuredContent;
  if (isError !== undefined) result.isError = isError;
  return result;
}

/** Whether a rebuilt server description has its keys in the order they came in `meta`. */
function sameKeyOrder(rebuilt: Record<string, unknown>, meta: Record<string, unknown>): boolean {
  const [key] = Object.keys(rebuilt);
  const keys = Object.keys(rebuilt[key] as object);
  const came = Object.keys(meta[key] as object);
  return keys.every((name, i) => came[i] === name);
}

function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  return typeof value === 'object' && value !== null && '~standard' in value;
}

/** The SDK's client, with `tools/call` results checked by {@link plainTextCallResult} first. */
export class RunnerClient extends Client {
  private readonly callResultSchema: StandardSchemaV1<unknown, CallToolResult> = {
    '~standard': {
      version: 1,
      vendor: 'runner',
      validate: (value) => {
        const plain = plainTextCallResult(value);
        if (plain) return { value: plain };
        // The era's own check, reported as the SDK reports it.
        const outcome = this._wireCodec().validateResult('tools/call', value);
        if (outcome.ok) return { value: outcome.value };
        return { issues: [{ message: outcome.reason === 'invalid' ? outcome.message : 'not-in-era: tools/call' }] };
      },
    },
  };

  override request<M extends RequestMethod>(request: { method: M; params?: Record<string, unknown> }, options?: RequestOptions): Promise<ResultTypeMap[M]>;
  override request<T extends StandardSchemaV1>(request: Request, resultSchema: T, options?: RequestOptions): Promise<StandardSchemaV1.InferOutput<T>>;
  override request(request: Request, schemaOrOptions?: StandardSchemaV1 | RequestOptions, options?: RequestOptions): Promise<unknown> {
    if (isStandardSchema(schemaOrOptions)) return super.request(request, schemaOrOptions, options);
    if (request.method === 'tools/call') return super.request(request, this.callResultSchema, schemaOrOptions);
    return super.request(request as { method: RequestMethod }, schemaOrOptions);
  }
}
