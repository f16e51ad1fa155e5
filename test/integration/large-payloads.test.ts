import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runFaulty } from '../helpers/faulty-workspace.js';

// A large image from a stdio app: its 16 MB of base64 (over the SDK's old
// 10 MB line cap) is parsed as it arrives and decoded into a spool file, which
// becomes the step's image file: the same bytes, referenced from result.json.

/** The bytes faulty.bigImage sends (test/apps/faulty-tools.js): byte i is (i * 31 + 7) & 255. */
function expectedBytes(bytes: number): Buffer {
  const data = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i++) data[i] = (i * 31 + 7) & 255;
  return data;
}

describe('a large binary result over stdio', () => {
  it('is saved byte for byte, referenced from result.json, and nothing is left in the spool', async () => {
    const bytes = 12_000_000;
    const run = await runFaulty(`  - id: picture\n    uses: faulty.bigImage\n    with: { bytes: ${bytes} }\n`, { process: true });
    const step = run.step('picture');
    expect(step.status).toBe('succeeded');
    const file = step.files.find((path: string) => path.endsWith('image-0.png'));
    expect(file).toBeDefined();
    expect(statSync(file).size).toBe(bytes);
    expect(readFileSync(file).equals(expectedBytes(bytes))).toBe(true);
    const stored = JSON.parse(readFileSync(join(file, '..', 'result.json'), 'utf8'));
    expect(stored.content).toEqual([{ type: 'image', mimeType: 'image/png', file: 'image-0.png', bytes }]);
    // The payload went through the spool (the folder exists), and its file was moved out of it.
    const spool = join(run.ws.artifacts, '.runner', 'spool');
    expect(existsSync(spool)).toBe(true);
    expect(readdirSync(spool)).toEqual([]);
  });

  it('over max-result fails naming the limit, and leaves no partial file in the spool', async () => {
    const run = await runFaulty('  - id: picture\n    uses: faulty.bigImage\n    with: { bytes: 12000000 }\n', { appYaml: '    max-result: 8MiB\n', process: true });
    const step = run.step('picture');
    expect(step.status).toBe('failed');
    expect(step.error.message).toContain('larger than its max-result of 8MiB');
    const spool = join(run.ws.artifacts, '.runner', 'spool');
    expect(existsSync(spool)).toBe(true);
    expect(readdirSync(spool)).toEqual([]);
  });
});
