// Splits a template string into literal text and its ${{ }} parts, cached by text.
import { remember } from './bounded-cache.js';

/** One `${{ ... }}` in a template string. */
export interface ExpressionPart {
  /** The text between `${{` and `}}`. */
  source: string;
  /** Offset of `${{` in the template string. */
  start: number;
  /** `${{ ... }}` as written. */
  raw: string;
}

/** A template string as literal text and `${{ }}` parts, in order. */
export interface TemplateParts {
  parts: (string | ExpressionPart)[];
  /** Offset of a `${{` that has no closing `}}`; scanning stopped there. */
  unterminatedAt?: number;
}

/** Splits text at each `${{ ... }}`; a `}}` inside a quoted string literal does not close it. */
export function splitTemplate(text: string): TemplateParts {
  const parts: (string | ExpressionPart)[] = [];
  let from = 0;
  for (;;) {
    const open = text.indexOf('${{', from);
    if (open < 0) break;
    if (open > from) parts.push(text.slice(from, open));
    let close = -1;
    let inString = false;
    for (let i = open + 3; i < text.length; i++) {
      const c = text[i];
      // `''` (an escaped quote) toggles twice, so it stays inside the string.
      if (c === "'") inString = !inString;
      else if (!inString && c === '}' && text[i + 1] === '}') {
        close = i;
        break;
      }
    }
    if (close < 0) return { parts, unterminatedAt: open };
    parts.push({ source: text.slice(open + 3, close), start: open, raw: text.slice(open, close + 2) });
    from = close + 2;
  }
  if (from < text.length) parts.push(text.slice(from));
  return { parts };
}

const templatePartsCache = new Map<string, TemplateParts>();

/** splitTemplate, cached: a 1,000-step chain evaluates the same templates many times. */
export function splitTemplateCached(text: string): TemplateParts {
  return templatePartsCache.get(text) ?? remember(templatePartsCache, text, splitTemplate(text));
}
