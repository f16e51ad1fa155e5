import { SEVERITY_ORDER, type Drift } from './types.js';

/** The longest before/after value shown in a diff; the lock holds the whole of it. */
export const MAX_SHOWN_VALUE_CHARS = 300;

/**
 * The drifts as text, one block per app or tool (`app.tool`), the block with
 * the worst change first; values are JSON (so a description's control
 * characters show escaped) and cut at MAX_SHOWN_VALUE_CHARS.
 */
export function formatDrift(drifts: readonly Drift[]): string {
  const blocks = new Map<string, Drift[]>();
  for (const drift of drifts) {
    const name = drift.tool === undefined ? `${drift.app} (the app)` : `${drift.app}.${drift.tool}`;
    const block = blocks.get(name);
    if (block) block.push(drift);
    else blocks.set(name, [drift]);
  }
  const rank = (block: Drift[]) => Math.min(...block.map((drift) => SEVERITY_ORDER.indexOf(drift.severity)));
  const ordered = [...blocks].sort(([nameA, a], [nameB, b]) => rank(a) - rank(b) || (nameA < nameB ? -1 : nameA > nameB ? 1 : 0));
  return ordered
    .map(([name, block]) => {
      const lines = [name];
      for (const drift of block) {
        lines.push(`  ${drift.stops ? '' : '(does not stop a run) '}${drift.change}`);
        if (drift.before !== undefined) lines.push(`    was: ${showValue(drift.before)}`);
        if (drift.after !== undefined) lines.push(`    now: ${showValue(drift.after)}`);
      }
      return lines.join('\n') + '\n';
    })
    .join('\n');
}

/** A value as one line of JSON, cut to MAX_SHOWN_VALUE_CHARS. */
export function showValue(value: unknown): string {
  // JSON escapes C0 controls; C1 controls (a lone CSI), bidi overrides and line separators are escaped too, so nothing a server sends can steer the terminal.
  const text = (JSON.stringify(value) ?? 'null').replace(/[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (text.length <= MAX_SHOWN_VALUE_CHARS) return text;
  return `${text.slice(0, MAX_SHOWN_VALUE_CHARS)}… (${(text.length - MAX_SHOWN_VALUE_CHARS).toLocaleString('en-US')} more characters)`;
}
