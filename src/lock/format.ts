import { SEVERITY_ORDER, type Drift } from './types.js';
import { cutText, safeForTerminal } from '../terminal-text.js';

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
  const text = safeForTerminal(JSON.stringify(value) ?? 'null');
  return cutText(text, MAX_SHOWN_VALUE_CHARS);
}
