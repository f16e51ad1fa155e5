import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LEGACY_VERDICT_TTL_MS, VerdictStore } from '../../src/apps/verdicts.js';
import type { AppConfig } from '../../src/config/types.js';

// The store of each app's protocol era (apps/verdicts.ts): a cache in one JSON file under
// artifacts/.runner, read once per process, rewritten atomically on each change.

const local: AppConfig = { name: 'local', transport: 'stdio', command: 'node', args: ['server.js'], env: {}, cwd: '/srv', roots: false };
const remote: AppConfig = { name: 'remote', transport: 'http', url: 'http://127.0.0.1:1/mcp', headers: {}, roots: false };
const modern = { kind: 'modern', discover: { supportedVersions: ['2026-07-28'], capabilities: {}, serverInfo: { name: 's', version: '1' } } } as const;

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function verdictFile(): string {
  dir = mkdtempSync(join(tmpdir(), 'runner-verdicts-'));
  return join(dir, 'verdicts.json');
}

describe('VerdictStore', () => {
  it('keeps a verdict across processes, one entry per app, and forgets a deleted one', () => {
    const file = verdictFile();
    const first = new VerdictStore(file);
    first.set(local, { kind: 'legacy' });
    first.set(remote, modern as never);

    const second = new VerdictStore(file);
    expect(second.get(local)).toEqual({ kind: 'legacy' });
    expect(second.get(remote)).toEqual(modern);
    second.delete(local);
    expect(new VerdictStore(file).get(local)).toBeUndefined();
    expect(new VerdictStore(file).get(remote)).toEqual(modern);
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toHaveLength(1);
  });

  it('tells apps apart by how they start or where they live, not by their name', () => {
    const store = new VerdictStore(null);
    store.set(local, { kind: 'legacy' });
    expect(store.get({ ...local, name: 'renamed' })).toEqual({ kind: 'legacy' });
    expect(store.get({ ...local, args: ['other.js'] })).toBeUndefined();
    expect(store.get({ ...local, env: { MODE: 'x' } })).toBeUndefined();
    expect(store.get({ ...local, cwd: '/elsewhere' })).toBeUndefined();
    expect(store.get({ ...remote, url: 'http://127.0.0.1:2/mcp' })).toBeUndefined();
  });

  it('trusts a legacy verdict for a day either way, a modern one until it fails', () => {
    let now = 1_000_000_000_000;
    const file = verdictFile();
    const store = new VerdictStore(file, () => now);
    store.set(local, { kind: 'legacy' });
    store.set(remote, modern as never);
    now += LEGACY_VERDICT_TTL_MS;
    expect(store.get(local)).toEqual({ kind: 'legacy' });
    now += 1;
    expect(store.get(local)).toBeUndefined();
    expect(store.get(remote)).toEqual(modern);

    // Dated more than a day ahead of this clock (a clock set back, an edited file).
    now -= 3 * LEGACY_VERDICT_TTL_MS;
    expect(new VerdictStore(file, () => now).get(local)).toBeUndefined();
  });

  it.for([
    ['not JSON', '{"a": '],
    ['an array', '[1, 2]'],
    ['null', 'null'],
  ])('starts empty on a file that is %s, and the next verdict rewrites it', ([, text]) => {
    const file = verdictFile();
    writeFileSync(file, text);
    const store = new VerdictStore(file);
    expect(store.get(local)).toBeUndefined();
    store.set(local, { kind: 'legacy' });
    expect(new VerdictStore(file).get(local)).toEqual({ kind: 'legacy' });
  });

  it('does not trust an entry of another shape, and keeps the others', () => {
    const file = verdictFile();
    const store = new VerdictStore(file);
    store.set(local, { kind: 'legacy' });
    store.set(remote, modern as never);
    const entries = JSON.parse(readFileSync(file, 'utf8'));
    const [localKey, remoteKey] = Object.keys(entries);
    for (const broken of [
      null,
      'legacy',
      { prior: { kind: 'legacy' } }, // no savedAt
      { prior: { kind: 'legacy' }, savedAt: 'yesterday' },
      { prior: { kind: 'modern' }, savedAt: Date.now() }, // no discover result
      { prior: { kind: 'modern', discover: 'yes' }, savedAt: Date.now() },
      { prior: { kind: 'future' }, savedAt: Date.now() },
    ]) {
      writeFileSync(file, JSON.stringify({ [localKey]: broken, [remoteKey]: entries[remoteKey] }));
      const reread = new VerdictStore(file);
      expect(reread.get(local), JSON.stringify(broken)).toBeUndefined();
      expect(reread.get(remote)).toEqual(modern);
    }
  });

  it('carries on in memory when the file cannot be written', () => {
    const file = verdictFile();
    writeFileSync(join(dir, 'runner'), 'a file where the folder should be'); // root cannot write through it either
    const store = new VerdictStore(join(dir, 'runner', 'verdicts.json'));
    expect(() => store.set(local, { kind: 'legacy' })).not.toThrow();
    expect(store.get(local)).toEqual({ kind: 'legacy' });
    expect(new VerdictStore(file).get(local)).toBeUndefined();
  });
});
