import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { measureOldGarbage } from '../../bench/lib/gc.mjs';

// The bench's diagnostic of (b): what a run leaves in the old generation for
// the next full GC. Importing bench/lib/gc.mjs exposes `gc` (a V8 flag), so
// this file runs in a process of its own (vitest.config.ts).
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;

/** About `count` small objects, each with its own string. */
const makeObjects = (count: number) => Array.from({ length: count }, (_, index) => ({ index, text: `object ${index}` }));

describe('measureOldGarbage', () => {
  it('counts what a run promoted and let go before the next full GC, and not what died young', async () => {
    const promoted = await measureOldGarbage(async () => {
      const held = makeObjects(50_000);
      // Alive at two scavenges: promoted to the old generation, then dropped when the run ends.
      gc({ type: 'minor' });
      gc({ type: 'minor' });
      return held.length;
    });
    expect(promoted.result).toBe(50_000);
    expect(promoted.deadBytes).toBeGreaterThan(1_500_000);

    const young = await measureOldGarbage(async () => {
      let made = 0;
      for (let round = 0; round < 20; round++) made += makeObjects(2_000).length; // each batch dead at once
      return made;
    });
    expect(young.deadBytes).toBeLessThan(promoted.deadBytes / 8);
  });

  it('counts what the run keeps alive after it as kept, not as garbage', async () => {
    let kept: unknown[] = [];
    const measured = await measureOldGarbage(async () => {
      kept = makeObjects(50_000);
      gc({ type: 'minor' });
      gc({ type: 'minor' });
    });
    expect(measured.keptBytes).toBeGreaterThan(1_500_000);
    expect(measured.deadBytes).toBeLessThan(measured.keptBytes / 3);
    expect(kept).toHaveLength(50_000);
  });
});
