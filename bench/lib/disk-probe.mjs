// Measures what the contract's per-step files cost on a filesystem right now:
// a new step folder, a temp file, a rename to result.json (what saveResult does).
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { round } from './stats.mjs';

/** Microseconds per step folder + result.json written atomically under `parent`, over `count` steps. */
export function probeStepFiles(parent, count = 300) {
  const dir = mkdtempSync(join(parent, 'disk-probe-'));
  const body = JSON.stringify({ content: [{ type: 'text', text: 'x' }], structuredContent: { text: 'x' } }, null, 2);
  try {
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const stepDir = join(dir, `s${i}`);
      mkdirSync(stepDir);
      const file = join(stepDir, 'result.json');
      writeFileSync(`${file}.tmp`, body);
      renameSync(`${file}.tmp`, file);
    }
    return round(((performance.now() - started) * 1000) / count, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
