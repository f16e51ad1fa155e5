/**
 * Strings at least this long (in UTF-16 code units) are written to JSON files
 * and to the run store in slices of at most this length, never copied whole:
 * a 60 MB tool result turned into one JSON text costs ~180 MB, and binding it
 * to SQLite another ~180 MB, which is what raised the runner's peak RSS to
 * ~700 MB for a result at the 64 MiB limit.
 */
export const LARGE_STRING_CHARS = 1024 * 1024;

/**
 * Whether a JSON-like value holds a string of at least LARGE_STRING_CHARS
 * (array elements and enumerable properties; keys are not looked at). This runs
 * before every record is written, so it is a plain walk without allocation.
 * Not exact for values with `toJSON` (what that returns is not seen): a miss
 * only means the value is written the ordinary way.
 */
export function containsLargeString(value: unknown): boolean {
  try {
    return walk(value);
  } catch {
    return false; // a cycle or a very deep value: JSON.stringify will say what is wrong with it
  }
}

function walk(node: unknown): boolean {
  if (typeof node === 'string') return node.length >= LARGE_STRING_CHARS;
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) if (walk(node[i])) return true;
    return false;
  }
  // for-in without hasOwn is twice as fast; an inherited property it also sees can only send a value down the slower, still exact, path.
  for (const key in node) if (walk((node as Record<string, unknown>)[key])) return true;
  return false;
}

/**
 * Cuts `text` into consecutive slices of at most `maxChars`, never between
 * the two halves of a surrogate pair: JSON.stringify writes a lone surrogate
 * as `\udxxx`, so a split pair would not give back the bytes of the whole.
 */
export function* sliceText(text: string, maxChars = LARGE_STRING_CHARS): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + maxChars, text.length);
    if (end < text.length && end - start > 1 && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))) end--;
    yield text.slice(start, end);
    start = end;
  }
}

/** Whether `text` has no lone surrogate (String.prototype.isWellFormed, Node 20; not in TypeScript's ES2022 lib). */
export function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
