import { mapDeep, mapRecordValues } from './artifacts/record-values.js';
import type { RunRecord } from './artifacts/run-record.js';
import type { SecretEntry } from './config/types.js';
import { isRecord } from './is-record.js';

const MASK = '***';

/** One way a secret can appear in text: as itself, or escaped inside a JSON string. */
interface SecretForm {
  text: string;
  entry: SecretEntry;
  form: 'raw' | 'json';
}

/** The forms of a secret list, longest first, ready to search for. */
interface Matcher {
  forms: SecretForm[];
  /** Length of the longest form (0 when there is none). */
  longest: number;
  /** Forms by their first character: what the stream masker checks at a chunk's end. */
  byFirstChar: Map<string, SecretForm[]>;
}

interface Occurrence {
  start: number;
  end: number;
  form: SecretForm;
}

/** Replaces each occurrence of a secret (raw or JSON-escaped form) by what `replace` returns. */
export function replaceSecrets(
  text: string,
  entries: readonly SecretEntry[],
  replace: (entry: SecretEntry, form: 'raw' | 'json') => string,
): string {
  if (entries.length === 0 || text.length === 0) return text;
  const found = findOccurrences(text, matcherFor(entries));
  if (found.length === 0) return text;
  // Longest first: `found` follows the forms, longest first, so a longer secret
  // claims its span before a secret inside it can; overlapping rivals lose.
  const taken = new Uint8Array(text.length);
  const chosen: Occurrence[] = [];
  for (const occurrence of found) {
    if (taken[occurrence.start] || taken[occurrence.end - 1]) continue;
    taken.fill(1, occurrence.start, occurrence.end);
    chosen.push(occurrence);
  }
  chosen.sort((a, b) => a.start - b.start);
  let out = '';
  let pos = 0;
  for (const { start, end, form } of chosen) {
    out += text.slice(pos, start) + replace(form.entry, form.form);
    pos = end;
  }
  return out + text.slice(pos);
}

/**
 * Replaces every secret value in `text` by `***`, in raw and JSON-escaped form.
 * Finds the same occurrences as `replaceSecrets`; where they overlap or touch,
 * one `***` covers them all, so no fragment of any secret is left showing.
 */
export function maskSecrets(text: string, secretValues: readonly string[]): string {
  if (secretValues.length === 0 || text.length === 0) return text;
  const found = findOccurrences(text, matcherFor(secretValues));
  if (found.length === 0) return text;
  return renderMasked(text, mergeRanges(found, 0), text.length, false).text;
}

/** Masks secrets anywhere inside a JSON-like value (strings only; keys kept). */
export function maskSecretsDeep<T>(value: T, secretValues: readonly string[]): T {
  if (secretValues.length === 0) return value;
  return mapDeep(value, (text) => maskSecrets(text, secretValues));
}

/** What `createStreamMasker` returns. */
export interface StreamMasker {
  /** Takes the next chunk; returns the text that is safe to emit now, masked. */
  push(chunk: string): string;
  /** Returns whatever was held back, masked; the masker is then ready for a new stream. */
  end(): string;
}

/** Masks secrets in a stream of text chunks, also across chunk boundaries. */
export function createStreamMasker(secretValues: readonly string[]): StreamMasker {
  const matcher = matcherFor(secretValues);
  // `pending` is the tail that could still be the start of a secret; its first
  // `maskedHead` characters already belong to a secret found earlier, and
  // `inMask` says the last character emitted was masked (so a secret running
  // on gets no second `***`). Only `pending` is ever re-scanned, never what
  // was emitted: an app writing 100 MB without a newline costs linear time.
  let pending = '';
  let maskedHead = 0;
  let inMask = false;

  const emit = (chunk: string, final: boolean): string => {
    const text = pending + chunk;
    if (text.length === 0) return '';
    const ranges = mergeRanges(findOccurrences(text, matcher), maskedHead);
    const cut = final ? text.length : findHoldStart(text, matcher);
    const rendered = renderMasked(text, ranges, cut, inMask);
    // A span reaching past the cut will not be found again from `pending` alone: carry it.
    const carried = ranges.find((range) => range.start <= cut && range.end > cut);
    pending = text.slice(cut);
    maskedHead = carried ? carried.end - cut : 0;
    if (cut > 0) inMask = rendered.endsMasked;
    return rendered.text;
  };

  return {
    push(chunk) {
      return matcher.longest === 0 ? chunk : emit(chunk, false);
    },
    end() {
      const rest = matcher.longest === 0 ? '' : emit('', true);
      pending = '';
      maskedHead = 0;
      inMask = false;
      return rest;
    },
  };
}

/** Masks the user-visible values of a run record (inputs, args, outputs, text, error messages, elicitation messages, trigger path), never ids, statuses, paths, keys, timestamps or `uses`. */
export function maskRunRecord<T extends RunRecord>(record: T, secretValues: readonly string[]): T {
  if (secretValues.length === 0) return record;
  return mapRecordValues(record, (text) => maskSecrets(text, secretValues)) as T;
}

/** Fields of result.json that the runner (or the protocol's structure) owns: kept as they are. */
const RESULT_FIELDS_KEPT = new Set(['type', 'mimeType', 'file', 'files', 'uri', 'bytes', 'size']);

/** Masks a CallToolResult as stored in result.json: text, structuredContent, resource text and _meta values; never `type`, `mimeType`, `file`, `uri` or sizes. */
export function maskToolResult(result: unknown, secretValues: readonly string[]): unknown {
  if (secretValues.length === 0 || !isRecord(result)) return maskSecretsDeep(result, secretValues);
  // Everything else is masked by default: a field the runner does not know
  // (a link's `description`, a `readError`) may carry a secret just as well.
  // fromEntries: a key an app calls `__proto__` stays an own field, as JSON.parse made it (assigning it would set the prototype).
  const maskBlock = (block: unknown): unknown => {
    if (!isRecord(block)) return maskSecretsDeep(block, secretValues);
    return Object.fromEntries(
      Object.entries(block).map(([key, value]) => [
        key,
        RESULT_FIELDS_KEPT.has(key) ? value : key === 'resource' ? maskBlock(value) : maskSecretsDeep(value, secretValues),
      ]),
    );
  };
  return Object.fromEntries(
    Object.entries(result).map(([key, value]) => [key, key === 'content' && Array.isArray(value) ? value.map(maskBlock) : maskSecretsDeep(value, secretValues)]),
  );
}

const matchers = new WeakMap<object, { items: unknown[]; values: string[]; matcher: Matcher }>();

/**
 * The matcher of a secret list, built once per list: masking runs on every log
 * line and record write. Checked item by item so a list changed in place is
 * never matched with stale forms.
 */
function matcherFor(list: readonly (string | SecretEntry)[]): Matcher {
  const cached = matchers.get(list);
  if (cached && cached.items.length === list.length && list.every((item, i) => item === cached.items[i] && valueOf(item) === cached.values[i])) {
    return cached.matcher;
  }
  const matcher = buildMatcher(list.map((item) => (typeof item === 'string' ? { name: '', value: item } : item)));
  matchers.set(list, { items: [...list], values: list.map(valueOf), matcher });
  return matcher;
}

function valueOf(item: string | SecretEntry): string {
  return typeof item === 'string' ? item : item.value;
}

function buildMatcher(entries: readonly SecretEntry[]): Matcher {
  const forms: SecretForm[] = [];
  const seen = new Set<string>();
  const add = (text: string, entry: SecretEntry, form: SecretForm['form']) => {
    if (text.length === 0 || seen.has(text)) return;
    seen.add(text);
    forms.push({ text, entry, form });
  };
  for (const entry of entries) {
    add(entry.value, entry, 'raw');
    for (const escaped of jsonFormsOf(entry.value)) add(escaped, entry, 'json');
  }
  forms.sort((a, b) => b.text.length - a.text.length); // stable: equal lengths keep the list's order
  const byFirstChar = new Map<string, SecretForm[]>();
  for (const form of forms) {
    const first = form.text[0];
    byFirstChar.set(first, [...(byFirstChar.get(first) ?? []), form]);
  }
  return { forms, longest: forms[0]?.text.length ?? 0, byFirstChar };
}

/**
 * How `value` looks inside a JSON string: as JavaScript writes it, and as
 * Python (`ensure_ascii`, every non-ASCII char as `\u00e9`) and Go (`<>&` as
 * `\u003c`) write it by default, since apps in those languages return JSON text too.
 */
function jsonFormsOf(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  const escape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  return [json, json.replace(/[^\x20-\x7e]/g, escape), json.replace(/[<>&\u2028\u2029]/g, escape)];
}

/** Every occurrence of every form, overlapping ones included, in form order (longest first). */
function findOccurrences(text: string, matcher: Matcher): Occurrence[] {
  const found: Occurrence[] = [];
  for (const form of matcher.forms) {
    // `indexOf` first: on the hot path no secret occurs and this is all the work done.
    for (let at = text.indexOf(form.text); at !== -1; at = text.indexOf(form.text, at + 1)) {
      found.push({ start: at, end: at + form.text.length, form });
    }
  }
  return found;
}

/** The spans to mask: occurrences (plus `[0, head)`) merged where they overlap or touch, in order. */
function mergeRanges(found: readonly Occurrence[], head: number): { start: number; end: number }[] {
  const spans = found.map(({ start, end }) => ({ start, end }));
  if (head > 0) spans.push({ start: 0, end: head });
  spans.sort((a, b) => a.start - b.start);
  const merged: { start: number; end: number }[] = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ ...span });
  }
  return merged;
}

/** `text` up to `end` with each span as one `***` (none for a span that continues a mask already emitted). */
function renderMasked(text: string, spans: readonly { start: number; end: number }[], end: number, continuing: boolean): { text: string; endsMasked: boolean } {
  let out = '';
  let pos = 0;
  let endsMasked = false;
  for (const span of spans) {
    if (span.start >= end) break;
    out += text.slice(pos, span.start);
    if (span.start > 0 || !continuing) out += MASK;
    pos = Math.min(span.end, end);
    endsMasked = pos === end;
  }
  return { text: out + text.slice(pos, end), endsMasked };
}

/**
 * Where the tail that could still become a secret begins: the first position
 * whose rest of `text` is a proper prefix of some form, else `text.length`.
 * Never more than (longest form − 1) characters are held back.
 */
function findHoldStart(text: string, matcher: Matcher): number {
  for (let p = Math.max(0, text.length - matcher.longest + 1); p < text.length; p++) {
    const candidates = matcher.byFirstChar.get(text[p]);
    if (!candidates) continue;
    const rest = text.length - p;
    for (const form of candidates) {
      if (form.text.length > rest && form.text.startsWith(text.slice(p))) return p;
    }
  }
  return text.length;
}
