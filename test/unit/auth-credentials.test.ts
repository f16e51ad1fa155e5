import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CredentialsFile } from '../../src/auth/credentials-file.js';
import { RunnerError } from '../../src/errors.js';
import { FakeClock } from '../helpers/fake-clock.js';

const tokens = (access: string) => ({ access_token: access, token_type: 'Bearer', refresh_token: `refresh-${access}` });

function freshFile(): CredentialsFile {
  return new CredentialsFile(join(mkdtempSync(join(tmpdir(), 'runner-creds-')), 'runner', 'credentials.json'));
}

describe('CredentialsFile', () => {
  it('keeps logins by server URL and app name, in a 0600 file in a 0700 folder, with no temp file left', async () => {
    const file = freshFile();
    await file.update('https://a.example/mcp', 'drive', () => ({ tokens: tokens('a1'), savedAt: 1 }));
    await file.update('https://a.example/mcp', 'drive-admin', () => ({ tokens: tokens('a2') }));
    await file.update('https://b.example/mcp', 'drive', () => ({ tokens: tokens('b1') }));
    expect((await file.read('https://a.example/mcp', 'drive'))?.tokens?.access_token).toBe('a1');
    expect((await file.read('https://b.example/mcp', 'drive'))?.tokens?.access_token).toBe('b1');
    expect(await file.read('https://c.example/mcp', 'drive')).toBeUndefined();
    expect((await file.list()).map(([url, app]) => `${url} ${app}`)).toEqual(['https://a.example/mcp drive', 'https://a.example/mcp drive-admin', 'https://b.example/mcp drive']);
    expect(statSync(file.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(file.path, '..')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(file.path, '..'))).toEqual(['credentials.json']);
    expect(JSON.parse(readFileSync(file.path, 'utf8'))).toMatchObject({ version: 1, servers: { 'https://a.example/mcp': { drive: { savedAt: 1 } } } });
  });

  it('deletes a login (and its server when it was the last one), and rewrites a too-open file as 0600', async () => {
    const file = freshFile();
    await file.update('https://a.example/mcp', 'drive', () => ({ tokens: tokens('a1') }));
    await file.update('https://a.example/mcp', 'other', () => ({ tokens: tokens('a2') }));
    chmodSync(file.path, 0o644);
    await file.update('https://a.example/mcp', 'drive', () => undefined);
    expect(await file.read('https://a.example/mcp', 'drive')).toBeUndefined();
    expect(statSync(file.path).mode & 0o777).toBe(0o600);
    await file.update('https://a.example/mcp', 'other', () => undefined);
    expect(JSON.parse(readFileSync(file.path, 'utf8'))).toEqual({ version: 1, servers: {} });
  });

  it('loses no update when many writers change it at once', async () => {
    const path = freshFile().path;
    await Promise.all(Array.from({ length: 20 }, (_, i) => new CredentialsFile(path).update('https://a.example/mcp', `app${i}`, () => ({ tokens: tokens(`t${i}`) }))));
    expect((await new CredentialsFile(path).list()).length).toBe(20);
  });

  it('takes over a lock left by a writer that died, and says how to recover from a corrupt file', async () => {
    const file = freshFile();
    await file.update('https://a.example/mcp', 'drive', () => ({ tokens: tokens('a1') }));
    writeFileSync(`${file.path}.lock`, '');
    const old = new Date(Date.now() - 120_000);
    utimesSync(`${file.path}.lock`, old, old);
    await file.update('https://a.example/mcp', 'drive', () => ({ tokens: tokens('a2') }));
    expect((await file.read('https://a.example/mcp', 'drive'))?.tokens?.access_token).toBe('a2');

    writeFileSync(file.path, '{ not json');
    const error = await file.read('https://a.example/mcp', 'drive').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunnerError);
    expect((error as RunnerError).message).toContain(`cannot read the credentials file ${file.path}`);
    expect((error as RunnerError).hint).toBe('delete it and log in again with `runner auth login APP`');
  });

  it('gives up on a lock another live writer holds, naming the lock file', async () => {
    const clock = new FakeClock('2026-01-01T00:00:00Z');
    const file = new CredentialsFile(freshFile().path, clock);
    await file.update('https://a.example/mcp', 'drive', () => ({}));
    writeFileSync(`${file.path}.lock`, '');
    const now = new Date('2026-01-01T00:00:00Z');
    utimesSync(`${file.path}.lock`, now, now);
    let settled = false;
    const pending = file.update('https://a.example/mcp', 'drive', () => undefined).then(
      () => (settled = true),
      (e: unknown) => ((settled = true), e),
    );
    // The file system works in real time: let it, between steps of fake time, until the writer gives up.
    while (!settled) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      await clock.advance(250);
    }
    const error = (await pending) as RunnerError;
    expect(error.message).toBe(`the credentials file ${file.path} stays locked by another runner process`);
    expect(error.hint).toBe(`if none is running, delete ${file.path}.lock`);
  });
});
