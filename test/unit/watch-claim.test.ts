import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimFile, claimRootFor, releaseClaim } from '../../src/triggers/claim.js';
import { hashFile, SeenStore } from '../../src/triggers/seen-store.js';

async function inbox() {
  const dir = await mkdtemp(join(tmpdir(), 'runner-claim-'));
  await mkdir(join(dir, 'inbox'));
  return dir;
}

describe('claim: move', () => {
  it('moves a file into processing/, then done/ or failed/, beside the watched folder', async () => {
    const dir = await inbox();
    await writeFile(join(dir, 'inbox', 'a.png'), 'A');
    const claimed = await claimFile(join(dir, 'inbox', 'a.png'), claimRootFor(join(dir, 'inbox'), dir));
    expect(claimed).toBe(join(dir, 'processing', 'a.png'));
    expect(existsSync(join(dir, 'inbox', 'a.png'))).toBe(false);
    expect(await releaseClaim(claimed!, 'done')).toBe(join(dir, 'done', 'a.png'));
    expect(readFileSync(join(dir, 'done', 'a.png'), 'utf8')).toBe('A');
    expect(readdirSync(join(dir, 'processing'))).toEqual([]);
  });

  it('keeps the claim folders inside the config folder', () => {
    expect(claimRootFor('/proj/artifacts/inbox', '/proj')).toBe('/proj/artifacts');
    expect(claimRootFor('/proj/inbox', '/proj')).toBe('/proj');
    expect(claimRootFor('/proj', '/proj')).toBe('/proj');
  });

  it('of two claims on one file exactly one wins', async () => {
    const dir = await inbox();
    await writeFile(join(dir, 'inbox', 'a.png'), 'A');
    const results = await Promise.all([claimFile(join(dir, 'inbox', 'a.png'), dir), claimFile(join(dir, 'inbox', 'a.png'), dir)]);
    expect(results.filter((result) => result !== undefined)).toHaveLength(1);
  });

  it('never replaces a file already in processing/ or done/', async () => {
    const dir = await inbox();
    await writeFile(join(dir, 'inbox', 'a.png'), 'first');
    const first = await claimFile(join(dir, 'inbox', 'a.png'), dir);
    await writeFile(join(dir, 'inbox', 'a.png'), 'second');
    const second = await claimFile(join(dir, 'inbox', 'a.png'), dir);
    expect(second).toBe(join(dir, 'processing', 'a-2.png'));
    await releaseClaim(first!, 'failed');
    await writeFile(join(dir, 'failed', 'a-2.png'), 'in the way');
    expect(await releaseClaim(second!, 'failed')).toBe(join(dir, 'failed', 'a-2-2.png'));
  });
});

describe('the same content never runs twice', () => {
  it('one process takes a content; a second is told it ran, with which run', async () => {
    const artifacts = await mkdtemp(join(tmpdir(), 'runner-seen-'));
    const store = new SeenStore(artifacts);
    const other = new SeenStore(artifacts); // another runner process on the same folder
    expect(await store.take('wf', 'abc', '/in/a.png', 0)).toEqual({ taken: true });
    expect(await other.take('wf', 'abc', '/in/b.png', 0)).toMatchObject({ taken: false, mark: { status: 'running', path: '/in/a.png' } });
    await store.finish('wf', 'abc', { runId: 'run-1', path: '/in/a.png', succeeded: true }, 0);
    expect(await new SeenStore(artifacts).take('wf', 'abc', '/in/c.png', 0)).toMatchObject({ taken: false, mark: { status: 'succeeded', runId: 'run-1' } });
    // Another workflow has its own memory.
    expect(await store.take('other', 'abc', '/in/a.png', 0)).toEqual({ taken: true });
  });

  it('a failed run forgets its content, so the file can be dropped again', async () => {
    const store = new SeenStore(await mkdtemp(join(tmpdir(), 'runner-seen-')));
    await store.take('wf', 'abc', '/in/a.png', 0);
    await store.finish('wf', 'abc', { runId: 'run-1', path: '/in/a.png', succeeded: false }, 0);
    expect(await store.take('wf', 'abc', '/in/a.png', 0)).toEqual({ taken: true });
  });

  it('a marker left running by a process that died is taken over', async () => {
    const artifacts = await mkdtemp(join(tmpdir(), 'runner-seen-'));
    const folder = join(artifacts, '.runner', 'seen', 'wf');
    await mkdir(folder, { recursive: true });
    const { hostname } = await import('node:os');
    await writeFile(join(folder, 'abc'), JSON.stringify({ status: 'running', path: '/in/a.png', pid: 2 ** 22 + 7, host: hostname(), at: '' }));
    expect(await new SeenStore(artifacts).take('wf', 'abc', '/in/a.png', 0)).toEqual({ taken: true });
  });

  it('hashes content with sha256', async () => {
    const dir = await inbox();
    await writeFile(join(dir, 'x'), 'hello\n');
    expect(await hashFile(join(dir, 'x'))).toBe('5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03');
  });
});
