import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunnerError } from '../../src/errors.js';
import {
  canonicalJson,
  compareWithLock,
  createToolCheck,
  formatDrift,
  hashPinnedFields,
  lockEntriesFor,
  MAX_PINNED_TOOL_BYTES,
  mergeLock,
  pinTool,
  readLockFile,
  serializeLock,
  usedTools,
  type ListedTool,
  type LiveApp,
  type LockFile,
} from '../../src/lock/index.js';

const server = { name: 'notes', version: '1.0.0' };
const write: ListedTool = {
  name: 'write',
  description: 'Writes a note',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnlyHint: false, destructiveHint: false },
};
const read: ListedTool = {
  name: 'read',
  description: 'Reads a note',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
  annotations: { readOnlyHint: true },
};

const used = new Map([['notes', new Set(['write', 'read'])]]);
const liveOf = (tools: ListedTool[], info: Partial<LiveApp> = {}): Map<string, LiveApp> =>
  new Map([['notes', { server, protocolVersion: '2025-11-25', tools, ...info }]]);
const lockOf = (tools: ListedTool[]) => lockEntriesFor(used, liveOf(tools));
const driftsAfter = (tools: ListedTool[], info?: Partial<LiveApp>) => compareWithLock(lockOf([write, read]), lockEntriesFor(used, liveOf(tools, info)), used);

describe('canonical hash', () => {
  it('does not depend on key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
    expect(pinTool(write).hash).toBe(pinTool({ ...write, annotations: { destructiveHint: false, readOnlyHint: false } }).hash);
    expect(hashPinnedFields(pinTool(write))).toBe(pinTool(write).hash);
  });
  it('keeps only the hash of a definition over the size cap', () => {
    const huge = pinTool({ ...write, description: 'x'.repeat(MAX_PINNED_TOOL_BYTES) });
    expect(huge).toEqual({ hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), oversize: true });
  });
  it('serializes sorted, 2-space indented, with a final newline, the same every time', () => {
    const text = serializeLock(lockOf([write, read]));
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.split('\n')[1]).toBe('  "version": 1,');
    expect(serializeLock(JSON.parse(text) as LockFile)).toBe(text);
    expect(Object.keys(JSON.parse(text).apps.notes.tools)).toEqual(['read', 'write']);
  });
});

describe('compareWithLock', () => {
  it('finds nothing when the tools are as locked', () => {
    expect(driftsAfter([read, write])).toEqual([]);
  });
  it('orders drifts worst first: less safe, new required argument, description, new optional argument', () => {
    const changed: ListedTool = {
      ...write,
      description: 'Writes a note, and mails it',
      inputSchema: { type: 'object', properties: { text: { type: 'string' }, to: { type: 'string' }, cc: { type: 'string' } }, required: ['text', 'to'] },
      annotations: { readOnlyHint: false },
    };
    const drifts = driftsAfter([changed, read]);
    expect(drifts.map((d) => [d.severity, d.change])).toEqual([
      ['less-safe', 'less safe: destructiveHint false → absent (true)'],
      ['breaking', 'new required argument `to`'],
      ['description', 'description changed'],
      ['schema', 'new optional argument `cc`'],
    ]);
    expect(drifts.every((d) => d.stops && d.app === 'notes' && d.tool === 'write')).toBe(true);
  });
  it('sees readOnlyHint true → false as less safe, and the reverse as a safer change that still stops', () => {
    const [worse] = driftsAfter([write, { ...read, annotations: { readOnlyHint: false } }]);
    expect(worse).toMatchObject({ tool: 'read', severity: 'less-safe', change: 'less safe: readOnlyHint true → false (so now destructive, not idempotent)', stops: true });
    const safer = driftsAfter([{ ...write, annotations: { readOnlyHint: true } }, read]);
    expect(safer[0]).toMatchObject({ severity: 'info', stops: true });
    expect(safer[0]!.change).toMatch(/^safer: readOnlyHint false → true/);
  });
  it('stops on a removed tool, a tool not in the lock and a removed or newly required argument', () => {
    expect(driftsAfter([write])).toEqual([{ app: 'notes', tool: 'read', severity: 'breaking', change: 'no longer listed by the app', stops: true }]);
    const onlyWrite = lockEntriesFor(new Map([['notes', new Set(['write'])]]), liveOf([write, read]));
    expect(compareWithLock(onlyWrite, lockOf([write, read]), used)[0]).toMatchObject({ tool: 'read', severity: 'breaking', change: expect.stringMatching(/^not in the lock/) });
    const drifts = driftsAfter([write, { ...read, inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } }]);
    expect(drifts.map((d) => d.change)).toEqual(['argument `id` became required']);
  });
  it('names arguments called like Object.prototype members as any other: `constructor` removed, `toString` new', () => {
    const before = { ...read, inputSchema: { type: 'object', properties: { constructor: { type: 'string' } } } } as ListedTool;
    const after = { ...read, inputSchema: { type: 'object', properties: { toString: { type: 'string' } } } } as ListedTool;
    const drifts = compareWithLock(lockOf([write, before]), lockEntriesFor(used, liveOf([write, after])), used);
    expect(drifts.map((d) => d.change)).toEqual(['argument `constructor` removed', 'new optional argument `toString`']);
  });
  it('ignores tools the workflows do not call', () => {
    const lock = lockOf([write, read]);
    const onlyWrite = new Map([['notes', new Set(['write'])]]);
    expect(compareWithLock(lock, lockEntriesFor(onlyWrite, liveOf([write, { ...read, description: 'changed' }])), onlyWrite)).toEqual([]);
  });
  it('reports a new server version without stopping, and another server as breaking', () => {
    expect(driftsAfter([write, read], { server: { name: 'notes', version: '1.1.0' } })).toEqual([
      { app: 'notes', severity: 'info', change: 'server version changed', before: '1.0.0', after: '1.1.0', stops: false },
    ]);
    expect(driftsAfter([write, read], { server: { name: 'other', version: '1.0.0' } })[0]).toMatchObject({ severity: 'breaking', stops: true });
  });
});

describe('formatDrift', () => {
  it('prints one block per tool, the worst block first, values cut and control characters escaped', () => {
    const drifts = driftsAfter([
      { ...write, description: `Writes \u009b31m${'y'.repeat(1000)}` },
      { ...read, annotations: { readOnlyHint: false } },
    ]);
    const text = formatDrift(drifts);
    expect(text.indexOf('notes.read\n')).toBe(0);
    expect(text).toContain('\nnotes.write\n  description changed\n    was: "Writes a note"\n    now: "Writes \\u009b31m');
    expect(text).toMatch(/… \(\d+ more characters\)/);
    expect(text).not.toContain('\u009b');
  });
});

describe('lock files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'runner-lock-'));
  const at = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  it('reads what serializeLock wrote; a missing file is no lock', async () => {
    const lock = lockOf([write, read]);
    expect(await readLockFile(at('good.lock', serializeLock(lock)))).toEqual(JSON.parse(serializeLock(lock)));
    expect(await readLockFile(join(dir, 'none.lock'))).toBeUndefined();
  });
  it('refuses a malformed lock with file:line:col', async () => {
    const syntax = await readLockFile(at('syntax.lock', '{\n  "version": 1,\n  "apps": {\n}')).catch((error: unknown) => error);
    expect(syntax).toBeInstanceOf(RunnerError);
    expect((syntax as RunnerError).location).toMatchObject({ file: join(dir, 'syntax.lock'), line: 4 });
    const text = serializeLock(lockOf([write, read])).replace('"Writes a note"', '"Writes a note quietly"');
    const edited = (await readLockFile(at('edited.lock', text)).catch((error: unknown) => error)) as RunnerError;
    expect(edited.message).toMatch(/hash of tool `notes.write` does not match its fields/);
    expect(edited.location!.line).toBe(text.split('\n').findIndex((line) => line.includes('"hash"') && text.indexOf(line) > text.indexOf('"write"')) + 1);
  });
});

describe('mergeLock', () => {
  it('replaces and adds the given entries and keeps every other tool', () => {
    const base = lockOf([write, read]);
    const onlyRead = lockEntriesFor(new Map([['notes', new Set(['read'])]]), liveOf([write, { ...read, description: 'new' }]));
    const merged = mergeLock(base, onlyRead);
    expect(merged.apps.notes!.tools.write).toEqual(base.apps.notes!.tools.write);
    expect(merged.apps.notes!.tools.read!.description).toBe('new');
    expect(usedTools([{ steps: [{ app: 'runner', tool: 'save' }, { app: 'a', tool: 'x' }] as never }])).toEqual(new Map([['a', new Set(['x'])]]));
  });
});

describe('createToolCheck', () => {
  it('passes a tool as locked, hashing each definition once; says what changed in another', () => {
    const check = createToolCheck(lockOf([write, read]));
    const listed = { ...write };
    expect(check('notes', listed)).toBeUndefined();
    listed.description = 'mutated after it was checked'; // the same object is not hashed again
    expect(check('notes', listed)).toBeUndefined();
    expect(check('notes', { ...read, annotations: { readOnlyHint: false } })).toBe('less safe: readOnlyHint true → false (so now destructive, not idempotent)');
    expect(check('other', write)).toMatch(/^not in the lock/);
  });
});
