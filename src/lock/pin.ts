import { createHash } from 'node:crypto';
import type { LockedTool, PinnedFields } from './types.js';

/**
 * The most bytes of one tool's pinned fields (as canonical JSON) the lock
 * keeps: 64 KiB. A server may send a description or schema of any size; over
 * this, only the hash goes into the lock, and a change shows as "changed".
 */
export const MAX_PINNED_TOOL_BYTES = 64 * 1024;

/** What a server lists for a tool, as far as the lock cares. */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: object;
}

/** JSON with object keys sorted at every level and no spaces: the same data always gives the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/** A copy of `value` with every object's keys sorted (undefined members dropped, as JSON does). */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) sorted[key] = sortKeys(member);
  }
  return sorted;
}

/** `sha256:<hex>` of the canonical JSON of a tool's pinned fields. */
export function hashPinnedFields(fields: PinnedFields): string {
  return hashText(canonicalJson(pinnedFieldsOf(fields)));
}

function hashText(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** Only the fields the lock pins, in their canonical form. */
export function pinnedFieldsOf(tool: PinnedFields | ListedTool): PinnedFields {
  return sortKeys({
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  }) as PinnedFields;
}

/** A tool as the lock keeps it: its pinned fields and their hash, or the hash alone when they are too large. */
export function pinTool(tool: ListedTool): LockedTool {
  const fields = pinnedFieldsOf(tool);
  const text = canonicalJson(fields);
  const hash = hashText(text);
  if (Buffer.byteLength(text) > MAX_PINNED_TOOL_BYTES) return { hash, oversize: true };
  return { hash, ...fields };
}
