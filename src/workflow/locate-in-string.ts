import type { SourceLocation } from '../errors.js';
import { locatePath, locationAt, type YamlPath, type YamlSource } from '../config/yaml-source.js';

// Where a character of a string value is written in the file. Plain and
// simply quoted one-line strings map one to one; in block scalars (`|`, `>`),
// multi-line and escaped strings the text is re-indented, folded or escaped,
// so the character is found as the same occurrence of the same word.

const WORD = /^(\$\{\{|[A-Za-z_][\w-]*|\S)/;

/** The file:line:col of `value[offset]`, where `value` is the string at `path`; the string's start when it cannot tell. */
export function locateInValue(source: YamlSource, path: YamlPath, value: string, offset: number): SourceLocation {
  const fallback = locatePath(source, path);
  const start = source.lineStarts![fallback.line - 1] + fallback.col - 1;
  const { text } = source;
  const first = text[start];
  const quote = first === '"' || first === "'" ? first : '';
  if (first !== '|' && first !== '>' && text.startsWith(value, start + quote.length) && (!quote || text[start + quote.length + value.length] === quote)) {
    return locationAt(source, start + quote.length + offset);
  }
  const word = WORD.exec(value.slice(offset, offset + 200))?.[0];
  if (word === undefined) return fallback;
  let count = 0;
  for (let at = value.indexOf(word); at !== -1 && at < offset; at = value.indexOf(word, at + word.length)) count++;
  let found = text.indexOf(word, start);
  for (; found !== -1 && count > 0; count--) found = text.indexOf(word, found + word.length);
  return found === -1 ? fallback : locationAt(source, found);
}
