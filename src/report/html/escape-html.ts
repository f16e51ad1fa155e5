// Every piece of text in report.html passes through here: step ids, tool
// names, app output and error messages come from workflows and apps, and a
// report must never run or load what they contain.

const SPECIAL = /[&<>"']/g;
const HAS_SPECIAL = /[&<>"']/;
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML (and inline SVG) content and for quoted attribute values. */
export function escapeHtml(text: string): string {
  // Most text (ids, times, statuses) has nothing to escape: a test is cheaper than a replace with a callback.
  if (!HAS_SPECIAL.test(text)) return text;
  return text.replace(SPECIAL, (char) => ENTITIES[char]);
}

const TEXT_SPECIAL = /[&<>]/g;
const HAS_TEXT_SPECIAL = /[&<>]/;

/**
 * Escapes text for the content of an element, never for an attribute value:
 * there only `&` and `<` start markup (`>` is escaped too, for readers), and
 * quotes are plain characters. Pretty JSON is full of quotes that escapeHtml
 * would turn into entities one callback at a time; here most of it has
 * nothing to escape.
 */
export function escapeText(text: string): string {
  if (!HAS_TEXT_SPECIAL.test(text)) return text;
  return text.replace(TEXT_SPECIAL, (char) => ENTITIES[char]);
}

/**
 * A path relative to the run folder as a link target: each segment
 * percent-encoded (a file named `a?b#c.png` stays a file), then escaped.
 */
export function escapeHref(relativePath: string): string {
  return escapeHtml(relativePath.split('/').map(encodeURIComponent).join('/'));
}

/** At most `max` characters of `text`, with `…` when cut (not splitting a surrogate pair). */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return text.slice(0, end) + '…';
}
