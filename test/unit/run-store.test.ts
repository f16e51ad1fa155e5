import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { ItemRecord, RunRecord, StepRecord } from '../../src/artifacts/run-record.js';
import { mapDeep } from '../../src/artifacts/record-values.js';
import { importRunFolders } from '../../src/store/import-runs.js';
import { deleteRuns } from '../../src/store/prune.js';
import { assembleRecord, displayRecord, findRun, openRunStore } from '../../src/store/run-history.js';
import { RunRecorder } from '../../src/store/run-recorder.js';
import type { RunOwner } from '../../src/store/run-store.js';
import { fromStoreForm, toDisplayForm, toStoreForm } from '../../src/store/secret-refs.js';
import { retryWhileBusy, SqliteRunStore } from '../../src/store/sqlite-run-store.js';
import { FakeClock } from '../helpers/fake-clock.js';

const owner: RunOwner = { host: 'here', pid: 1, started: null, heartbeatMs: 0 };
const other: RunOwner = { host: 'there', pid: 2, started: null, heartbeatMs: 0 };
const open: { close(): void }[] = [];

function tempArtifacts(): string {
  return mkdtempSync(join(tmpdir(), 'runner-store-'));
}

function storeAt(artifacts: string): SqliteRunStore {
  const store = new SqliteRunStore(artifacts);
  open.push(store);
  return store;
}

function step(id: string, status: StepRecord['status'] = 'pending'): StepRecord {
  return { id, uses: 'app.tool', status, attempts: 0, startedAt: null, endedAt: null, args: null, outputs: null, text: '', files: [], policy: null, error: null, history: [] };
}

function run(id: string, workflow = 'wf', status: RunRecord['status'] = 'succeeded', steps = [step('a', 'succeeded')]): RunRecord {
  return {
    id,
    workflow,
    status,
    trigger: { type: 'manual' },
    inputs: {},
    startedAt: `${id.slice(0, 4)}-${id.slice(4, 6)}-${id.slice(6, 8)}T${id.slice(9, 11)}:${id.slice(11, 13)}:${id.slice(13, 15)}.000Z`,
    endedAt: null,
    dir: '/nowhere',
    apps: {},
    steps,
  };
}

function save(store: SqliteRunStore, record: RunRecord, by = owner) {
  const { steps, ...rest } = record;
  store.createRun({ run: rest, steps: steps.map(({ items, ...record }) => (items ? { record, items } : { record })) }, by);
}

afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

describe('SqliteRunStore', () => {
  it('lists runs newest first, filtered by workflow, status, start time and limit; the folder always comes from its own layout', () => {
    const artifacts = tempArtifacts();
    const store = storeAt(artifacts);
    save(store, run('20260101-000000-000-aaaa', 'one', 'succeeded'));
    save(store, run('20260102-000000-000-bbbb', 'two', 'failed'));
    save(store, run('20260103-000000-000-cccc', 'one', 'failed'));
    expect(store.listRuns().map((r) => r.id)).toEqual(['20260103-000000-000-cccc', '20260102-000000-000-bbbb', '20260101-000000-000-aaaa']);
    expect(store.listRuns({ workflow: 'one' }).map((r) => r.id)).toEqual(['20260103-000000-000-cccc', '20260101-000000-000-aaaa']);
    expect(store.listRuns({ status: 'failed', limit: 1 }).map((r) => r.id)).toEqual(['20260103-000000-000-cccc']);
    expect(store.listRuns({ sinceMs: Date.parse('2026-01-02T00:00:00Z') }).map((r) => r.id)).toHaveLength(2);
    expect(store.listRuns({ workflow: 'one', offset: 1 }).map((r) => r.id)).toEqual(['20260101-000000-000-aaaa']);
    expect(store.listRuns()[0]!.dir).toBe(join(artifacts, 'one', '20260103-000000-000-cccc'));
    expect(store.getRun('20260102-000000-000-bbbb')!.run.dir).toBe(join(artifacts, 'two', '20260102-000000-000-bbbb'));
  });

  it('finds a run by id, unique prefix or `latest`, and says when a prefix is ambiguous or matches nothing', () => {
    const artifacts = tempArtifacts();
    const store = storeAt(artifacts);
    save(store, run('20260101-000000-000-aaaa'));
    save(store, run('20260101-000000-000-abbb'));
    expect(findRun(store, artifacts, '20260101-000000-000-ab').id).toBe('20260101-000000-000-abbb');
    expect(findRun(store, artifacts, 'latest').id).toBe('20260101-000000-000-abbb');
    expect(() => findRun(store, artifacts, '2026')).toThrow(/ambiguous/);
    expect(() => findRun(store, artifacts, '2099')).toThrow(/no run `2099`/);
    expect(() => findRun(store, artifacts, "x' OR 1=1")).toThrow(/no run/);
  });

  it('keeps steps and foreach items apart, and drops items past a shorter list', () => {
    const store = storeAt(tempArtifacts());
    const record = run('20260101-000000-000-aaaa', 'wf', 'running', [step('a'), step('b')]);
    save(store, record);
    const item = (index: number) => ({ index, status: 'succeeded' as const, attempts: 1, args: null, outputs: index, text: '', files: [], error: null, history: [] });
    store.write({ runId: record.id, steps: [{ position: 1, record: { ...step('b', 'running') } }], items: [0, 1, 2].map((i) => ({ stepId: 'b', record: item(i) })) });
    expect(store.getRun(record.id)!.steps[1]!.items!.map((i) => i.outputs)).toEqual([0, 1, 2]);
    store.write({ runId: record.id, steps: [{ position: 1, record: step('b', 'running'), itemCount: 1 }] });
    expect(store.getRun(record.id)!.steps.map((s) => [s.record.id, s.record.status, s.items?.length])).toEqual([
      ['a', 'pending', undefined],
      ['b', 'running', 1],
    ]);
  });

  it('journals intents until their outcome is recorded', () => {
    const store = storeAt(tempArtifacts());
    const record = run('20260101-000000-000-aaaa', 'wf', 'running');
    save(store, record);
    const intent = { id: 'i1', runId: record.id, stepId: 'a', item: null, attempt: 1, uses: 'app.tool', sentAt: '2026-01-01T00:00:00.000Z' };
    store.write({ runId: record.id, intents: [intent, { ...intent, id: 'i2', item: 3 }] }, { durable: true });
    expect(store.openIntents(record.id).map((entry) => [entry.id, entry.item])).toEqual([
      ['i1', null],
      ['i2', 3],
    ]);
    store.write({ runId: record.id, settled: [{ id: 'i1', outcome: 'succeeded', endedAt: '2026-01-01T00:00:01.000Z' }] });
    expect(store.openIntents(record.id).map((entry) => entry.id)).toEqual(['i2']);
  });

  it('gives a run to a new owner only when the one holding it is not alive', () => {
    const store = storeAt(tempArtifacts());
    save(store, run('20260101-000000-000-aaaa', 'wf', 'running'), other);
    expect(store.claimRun('20260101-000000-000-aaaa', owner, () => true)).toEqual({ claimed: false, holder: expect.objectContaining({ host: 'there', pid: 2 }) });
    expect(store.claimRun('20260101-000000-000-aaaa', owner, () => false)).toEqual({ claimed: true });
    expect(store.unfinishedRuns()[0]!.owner).toMatchObject({ host: 'here', pid: 1 });
    store.releaseRun('20260101-000000-000-aaaa', owner);
    expect(store.unfinishedRuns()[0]!.owner).toBeNull();
  });

  it('is shared by two connections (two processes) on one folder', () => {
    const artifacts = tempArtifacts();
    const first = storeAt(artifacts);
    const second = storeAt(artifacts);
    save(first, run('20260101-000000-000-aaaa'));
    save(second, run('20260101-000000-000-bbbb'));
    expect(first.listRuns().map((r) => r.id)).toEqual(['20260101-000000-000-bbbb', '20260101-000000-000-aaaa']);
  });

  // Two processes opening a new file at once: SQLite answers one of them SQLITE_BUSY without waiting.
  it('opens again after a busy lock SQLite reports at once, with growing pauses, until the deadline', () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const pauses: number[] = [];
    let calls = 0;
    const opened = retryWhileBusy(
      () => {
        if (++calls <= 3) throw busy;
        return 'open';
      },
      Date.now() + 60_000,
      (ms) => pauses.push(ms),
    );
    expect(opened).toBe('open');
    expect(pauses).toHaveLength(3);
    for (const [attempt, ms] of pauses.entries()) {
      expect(ms).toBeGreaterThanOrEqual(5 * 2 ** attempt);
      expect(ms).toBeLessThanOrEqual(15 * 2 ** attempt);
    }

    const alwaysFailing = (error: Error) => () => {
      calls++;
      throw error;
    };
    calls = 0;
    expect(() => retryWhileBusy(alwaysFailing(busy), Date.now() - 1, () => {})).toThrow('database is locked');
    expect(calls).toBe(1);
    calls = 0;
    const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    expect(() => retryWhileBusy(alwaysFailing(full), Date.now() + 60_000, () => {})).toThrow('disk is full');
    expect(calls).toBe(1);
  });
});

describe('importRunFolders', () => {
  it('imports plausible run.json files once, from their own folder, and skips anything else', () => {
    const artifacts = tempArtifacts();
    const plant = (workflow: string, id: string, text: string) => {
      mkdirSync(join(artifacts, workflow, id), { recursive: true });
      writeFileSync(join(artifacts, workflow, id, 'run.json'), text);
    };
    plant('wf', '20250101-000000-000-aaaa', JSON.stringify({ ...run('20250101-000000-000-aaaa'), dir: '/etc' }));
    plant('wf', '20250101-000000-000-bbbb', '{}');
    plant('wf', '20250101-000000-000-cccc', 'not json');
    plant('wf', '20250101-000000-000-dddd', JSON.stringify(run('20250101-000000-000-ffff'))); // id of another folder
    plant('wf', 'not-a-run-id', JSON.stringify(run('not-a-run-id')));
    const store = storeAt(artifacts);
    expect(importRunFolders(store, owner)).toBe(1);
    const imported = store.getRun('20250101-000000-000-aaaa')!;
    expect(imported.imported).toBe(true);
    expect(imported.run.dir).toBe(join(artifacts, 'wf', '20250101-000000-000-aaaa'));
    plant('wf', '20250102-000000-000-eeee', JSON.stringify(run('20250102-000000-000-eeee')));
    expect(importRunFolders(store, owner)).toBe(0); // once: later files are never read back
    expect(store.listRuns().map((r) => r.id)).toEqual(['20250101-000000-000-aaaa']);
  });
});

describe('secret references', () => {
  const secrets = [{ name: 'TOKEN', value: 'sk-"x"' }];

  it('stores a reference, shows ***, and puts the current value back, raw or JSON-escaped', () => {
    const text = `raw sk-"x" and json {"t":"sk-\\"x\\""}`;
    const stored = toStoreForm(text, secrets);
    expect(stored).not.toContain('sk-');
    expect(toDisplayForm(stored)).toBe('raw *** and json {"t":"***"}');
    expect(fromStoreForm(stored, secrets)).toBe(text);
    expect(fromStoreForm(stored, [{ name: 'TOKEN', value: 'new' }])).toBe('raw new and json {"t":"new"}');
    expect(() => fromStoreForm(stored, [])).toThrow(/secret TOKEN, which is not set now/);
  });

  it('never lets a value that imitates a reference pull a secret out', () => {
    const hostile = '\u001b{TOKEN} leaks?';
    const stored = toStoreForm(hostile, secrets);
    expect(fromStoreForm(stored, secrets)).toBe(hostile);
    expect(toDisplayForm(stored)).toBe(hostile);
  });
});

describe('RunRecorder', () => {
  it('writes an intent together with every change before it, and lazily batches the rest', () => {
    const artifacts = tempArtifacts();
    const store = storeAt(artifacts);
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const record = run('20260101-000000-000-aaaa', 'wf', 'running', [step('a'), step('b')]);
    const failures: unknown[] = [];
    const recorder = new RunRecorder(store, record, { owner, secrets: [{ name: 'TOKEN', value: 's3cret' }], clock, session: 0, onFailure: (e) => failures.push(e) });
    recorder.create();
    record.steps[0]!.status = 'succeeded';
    record.steps[0]!.outputs = { token: 's3cret' };
    recorder.stepChanged('a');
    expect(store.getRun(record.id)!.steps[0]!.record.status).toBe('pending'); // lazy: not yet
    const token = recorder.intent({ stepId: 'b', attempt: 1, uses: 'app.tool' });
    const stored = store.getRun(record.id)!;
    expect(stored.steps[0]!.record.status).toBe('succeeded');
    expect(JSON.stringify(stored)).not.toContain('s3cret');
    expect(displayRecord(stored).steps[0]!.outputs).toEqual({ token: '***' });
    expect(store.openIntents(record.id).map((entry) => entry.stepId)).toEqual(['b']);
    record.steps[1]!.status = 'succeeded';
    recorder.stepChanged('b');
    recorder.settle(token, 'succeeded');
    expect(store.openIntents(record.id)).toEqual([]);
    expect(assembleRecord(store.getRun(record.id)!).steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    recorder.close();
    expect(failures).toEqual([]);
  });

  it('reports a failed write instead of throwing from a timer', () => {
    const store = storeAt(tempArtifacts());
    const clock = new FakeClock(0);
    const record = run('20260101-000000-000-aaaa', 'wf', 'running');
    const failures: unknown[] = [];
    const recorder = new RunRecorder(store, record, { owner, secrets: [], clock, session: 0, onFailure: (e) => failures.push(e) });
    recorder.create();
    store.close();
    recorder.stepChanged('a');
    recorder.flush();
    expect(failures).toHaveLength(1);
    expect(() => recorder.intent({ stepId: 'a', attempt: 1, uses: 'app.tool' })).toThrow();
  });
});

describe('openRunStore', () => {
  it('creates the store under .runner/ and imports old run folders on first use', () => {
    const artifacts = tempArtifacts();
    mkdirSync(join(artifacts, 'wf', '20250101-000000-000-aaaa'), { recursive: true });
    writeFileSync(join(artifacts, 'wf', '20250101-000000-000-aaaa', 'run.json'), JSON.stringify(run('20250101-000000-000-aaaa')));
    const store = openRunStore(artifacts);
    open.push(store);
    expect(store.listRuns().map((r) => r.id)).toEqual(['20250101-000000-000-aaaa']);
  });
});

describe('mapDeep', () => {
  it('copies only what changes, and keeps a `__proto__` key a plain value', () => {
    const value = JSON.parse('{"a":{"b":"keep"},"c":["x","secret"],"__proto__":"secret"}');
    const mapped = mapDeep(value, (text) => text.replace('secret', '***'));
    expect(mapped.a).toBe(value.a);
    expect(mapped.c).toEqual(['x', '***']);
    expect(Object.getOwnPropertyDescriptor(mapped, '__proto__')?.value).toBe('***');
    expect(JSON.stringify(mapped)).not.toContain('secret');
    expect(mapDeep(value.a, (text) => text)).toBe(value.a);
  });
});

describe('large strings in the store', () => {
  const MB3 = 3_000_000;
  const big = (fill: string) => `${fill.repeat(MB3 - 6)}"\u{1F600}\ud800\\`; // a pair, a lone surrogate, escapes: all must come back as they were
  const dbOf = (artifacts: string) => {
    const db = new Database(join(artifacts, '.runner', 'runs.db'), { readonly: true });
    return {
      chunks: (runId: string) => db.prepare(`SELECT rowid, step_id, item, value_id, iif(typeof(chunk) = 'blob', length(chunk) / 2, length(chunk)) AS size, typeof(chunk) AS type FROM large_values WHERE run_id = ? ORDER BY rowid`).all(runId) as { rowid: number; step_id: string; item: number; value_id: string; size: number; type: string }[],
      stepJson: (runId: string, stepId: string) => db.prepare(`SELECT record FROM steps WHERE run_id = ? AND step_id = ?`).pluck().get(runId, stepId) as string,
      close: () => db.close(),
    };
  };
  const id = '20260101-000000-000-aaaa';

  it('keeps a 3 MB string in chunks of at most 1 MiB, gives it back exactly, and does not write it again while it is unchanged', () => {
    const artifacts = tempArtifacts();
    const store = storeAt(artifacts);
    const db = dbOf(artifacts);
    const text = big('x');
    const a = { ...step('a', 'succeeded'), text, outputs: { nested: [text] } };
    save(store, run(id, 'wf', 'running', [a, step('b')]));
    const first = db.chunks(id);
    expect(first).toHaveLength(3); // text and outputs share one value
    expect(new Set(first.map((chunk) => chunk.value_id)).size).toBe(1);
    expect(first.every((chunk) => chunk.size <= 1024 * 1024)).toBe(true);
    expect(first.map((chunk) => chunk.type)).toEqual(['text', 'text', 'blob']); // the last one has the lone surrogate
    expect(db.stepJson(id, 'a').length).toBeLessThan(1000);
    const stored = store.getRun(id)!;
    expect(stored.steps[0]!.record.text === text).toBe(true);
    expect(stored.steps[0]!.record.outputs).toEqual({ nested: [text] });
    expect(displayRecord(stored).steps[0]!.text).toBe(text);

    store.write({ runId: id, steps: [{ position: 0, record: { ...a, attempts: 2 } }] });
    expect(db.chunks(id)).toEqual(first); // the same rows: not written again
    expect(store.getRun(id)!.steps[0]!.record.attempts).toBe(2);

    const changed = big('y');
    store.write({ runId: id, steps: [{ position: 0, record: { ...a, text: changed, outputs: null } }] });
    const second = db.chunks(id);
    expect(second).toHaveLength(3);
    expect(second.some((chunk) => chunk.value_id === first[0]!.value_id)).toBe(false); // the old value is gone
    expect(store.getRun(id)!.steps[0]!.record.text).toBe(changed);

    store.write({ runId: id, steps: [{ position: 0, record: { ...a, text: 'small now', outputs: null } }] });
    expect(db.chunks(id)).toEqual([]);
    db.close();
  });

  it('keeps foreach items and run inputs the same way, and removes their chunks with trimmed items and pruned runs', async () => {
    const artifacts = tempArtifacts();
    const store = storeAt(artifacts);
    const db = dbOf(artifacts);
    const text = big('z');
    const item = (index: number) => ({ index, status: 'succeeded' as const, attempts: 1, args: { text }, outputs: null, text: `${index}`, files: [], error: null, history: [] });
    const record = { ...run(id, 'wf', 'running', [{ ...step('a'), items: [item(0), item(1)] }]), inputs: { doc: text } };
    save(store, record);
    expect(db.chunks(id).map((chunk) => `${chunk.step_id}/${chunk.item}`)).toEqual(['/-2', '/-2', '/-2', 'a/0', 'a/0', 'a/0', 'a/1', 'a/1', 'a/1']);
    const stored = store.getRun(id)!;
    expect(stored.run.inputs.doc).toBe(text);
    expect(stored.steps[0]!.items!.map((entry) => (entry.args as { text: string }).text === text)).toEqual([true, true]);

    store.write({ runId: id, steps: [{ position: 0, record: step('a', 'running'), itemCount: 1 }] });
    expect(db.chunks(id).map((chunk) => `${chunk.step_id}/${chunk.item}`)).toEqual(['/-2', '/-2', '/-2', 'a/0', 'a/0', 'a/0']);

    await deleteRuns(store, store.listRuns());
    expect(db.chunks(id)).toEqual([]);
    db.close();
  });

  it('leaves a string that looks like a placeholder as it is', () => {
    const artifacts = tempArtifacts();
    const store = storeAt(artifacts);
    const db = dbOf(artifacts);
    save(store, run(id, 'wf', 'running', [{ ...step('a'), text: big('x') }, step('b')]));
    const placeholder = JSON.parse(db.stepJson(id, 'a')).text as string;
    // eslint-disable-next-line no-control-regex -- ESC starts the placeholder of a large value
    expect(placeholder).toMatch(/^\u001blarge:/);
    // Straight into the store (as an imported run.json could) on another record, and from an app through the recorder.
    store.write({ runId: id, steps: [{ position: 1, record: { ...step('b'), text: placeholder } }] });
    expect(store.getRun(id)!.steps[1]!.record.text).toBe(placeholder);
    const recorded = run('20260101-000000-000-bbbb', 'wf', 'running', [{ ...step('a'), text: placeholder }]);
    new RunRecorder(store, recorded, { owner, secrets: [], clock: new FakeClock(0), session: 0, onFailure: () => {} }).create();
    expect(fromStoreForm(store.getRun(recorded.id)!.steps[0]!.record.text as string, [])).toBe(placeholder);
    db.close();
  });

  it('stores large strings after secrets are replaced by references', () => {
    const artifacts = tempArtifacts();
    const store = storeAt(artifacts);
    const db = dbOf(artifacts);
    const record = run(id, 'wf', 'running', [{ ...step('a', 'succeeded'), text: `${'x'.repeat(MB3)} s3cret` }]);
    const recorder = new RunRecorder(store, record, { owner, secrets: [{ name: 'TOKEN', value: 's3cret' }], clock: new FakeClock(0), session: 0, onFailure: () => {} });
    recorder.create();
    expect(db.chunks(id)).toHaveLength(3);
    const stored = store.getRun(id)!;
    expect(JSON.stringify(stored)).not.toContain('s3cret');
    expect((displayRecord(stored).steps[0]!.text as string).endsWith(' ***')).toBe(true);
    expect(fromStoreForm(stored.steps[0]!.record.text as string, [{ name: 'TOKEN', value: 's3cret' }])).toBe(record.steps[0]!.text);
    recorder.close();
    db.close();
  });

  it('writes a value again after a write that rolled back', () => {
    const artifacts = tempArtifacts();
    const store = storeAt(artifacts);
    const a = { ...step('a', 'succeeded'), text: big('x') };
    save(store, run(id, 'wf', 'running', [a]));
    const changed = { ...a, text: big('y') };
    const broken = { index: 0, status: null } as unknown as ItemRecord; // status NOT NULL: fails after the step's chunks are written
    expect(() => store.write({ runId: id, steps: [{ position: 0, record: changed }], items: [{ stepId: 'a', record: broken }] })).toThrow();
    expect(store.getRun(id)!.steps[0]!.record.text).toBe(a.text);
    store.write({ runId: id, steps: [{ position: 0, record: changed }] });
    expect(store.getRun(id)!.steps[0]!.record.text).toBe(changed.text);
  });

  it('adds its table to a store written by a runner that knew schema 1', () => {
    const artifacts = tempArtifacts();
    storeAt(artifacts).close();
    const db = new Database(join(artifacts, '.runner', 'runs.db'));
    db.exec(`DROP TABLE large_values; UPDATE meta SET value = '1' WHERE key = 'schema'`);
    db.close();
    const store = storeAt(artifacts);
    save(store, run(id, 'wf', 'succeeded', [{ ...step('a'), text: big('x') }]));
    expect(store.getRun(id)!.steps[0]!.record.text).toBe(big('x'));
    expect(store.getMeta('schema')).toBe('2');
  });
});
