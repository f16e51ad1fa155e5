import { escapeHtml, escapeText } from './escape-html.js';

/** Past this many characters a value is collapsed under a <details>. */
const COLLAPSE_CHARS = 600;
/** Past this many, only the start is shown: the whole value is in run.json and the step's result.json. */
const SHOWN_CHARS = 100_000;

/** A labelled value (arguments, outputs, inputs) as pretty JSON, collapsed when large; nothing when there is none. */
export function renderValue(label: string, value: unknown, options: { collapsed?: boolean } = {}): string {
  if (value === undefined || value === null) return '';
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- String() only gets what JSON cannot show (a function, a symbol)
  let text = typeof value === 'string' ? value : JSON.stringify(value, null, 2) ?? String(value);
  const size = text.length;
  if (size > SHOWN_CHARS) text = `${text.slice(0, SHOWN_CHARS)}\n… ${size - SHOWN_CHARS} more characters (see run.json)`;
  // Element content: quotes stay as they are (JSON has many), `&`, `<` and `>` are escaped.
  const pre = `<pre>${escapeText(text)}</pre>`;
  if (!options.collapsed && size <= COLLAPSE_CHARS && text.split('\n', 16).length < 16) return `<div class="value"><h4>${escapeHtml(label)}</h4>${pre}</div>`;
  return `<details class="value"><summary>${escapeHtml(label)} <span class="muted">(${formatSize(size)})</span></summary>${pre}</details>`;
}

function formatSize(chars: number): string {
  return chars < 10_000 ? `${chars} characters` : `${Math.round(chars / 1024)} K characters`;
}
