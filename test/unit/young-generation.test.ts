import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/workspace.js';

// The young generation's size is process-wide and V8 grows it only once, so
// each case runs in a fresh process on the built module: it loads 300,000
// objects that survive (as a large workflow's data does), then as many again.
const script = `
import { getHeapSpaceStatistics } from 'node:v8';
const { withYoungGenerationHeld, HOLD_YOUNG_GENERATION_BYTES } = await import(${JSON.stringify(join(repoRoot, 'dist', 'config', 'young-generation.js'))});
const newSpace = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
const kept = [];
const load = () => { for (let i = 0; i < 300_000; i++) kept.push({ i, text: 'item ' + i }); return kept.length; };
const before = newSpace();
const loaded = withYoungGenerationHeld(Number(process.argv[1]) * HOLD_YOUNG_GENERATION_BYTES, load);
const held = newSpace();
load();
console.log(JSON.stringify({ loaded, before, held, after: newSpace() }));
`;

async function measure(size: number, nodeFlags: string[] = []): Promise<{ loaded: number; before: number; held: number; after: number }> {
  const { stdout } = await promisify(execFile)(process.execPath, [...nodeFlags, '--input-type=module', '-e', script, String(size)]);
  return JSON.parse(stdout) as { loaded: number; before: number; held: number; after: number };
}

const MiB = 1024 ** 2;

describe.concurrent('withYoungGenerationHeld', () => {
  it('keeps the young generation small while a large file loads, and lets it grow afterwards', async () => {
    const sizes = await measure(1);
    expect(sizes.loaded).toBe(300_000);
    expect(sizes.held).toBeLessThanOrEqual(Math.max(4 * MiB, 2 * sizes.before));
    expect(sizes.after).toBeGreaterThanOrEqual(16 * MiB);
  });

  it('leaves a small file alone: V8 grows the young generation as usual', async () => {
    const sizes = await measure(0.5);
    expect(sizes.held).toBeGreaterThanOrEqual(16 * MiB);
  });

  it('leaves the growth factor alone when the process was started with one', async () => {
    const sizes = await measure(1, ['--semi_space_growth_factor=2']);
    expect(sizes.held).toBeGreaterThanOrEqual(16 * MiB);
  });
});
