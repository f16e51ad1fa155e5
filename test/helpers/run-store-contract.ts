import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ItemRecord, RunRecord, StepRecord } from '../../src/artifacts/run-record.js';
import { deleteRuns, selectRunsToPrune } from '../../src/store/prune.js';
import { findRun } from '../../src/store/run-history.js';
import type { RunOwner, RunStore } from '../../src/store/run-store.js';
import { takeOverRun } from '../../src/store/take-over.js';

/** Two handles on one store, as two processes (or machines) would open it. */
export interface StoreUnderTest {
  artifacts: string;
  /** A new connection to the same store; the contract closes it. */
  open(): RunStore;
}

export const owner: RunOwner = { host: 'here', pid: 1, started: null, heartbeatMs: 0 };
export const other: RunOwner = { host: 'there', pid: 2, started: null, heartbeatMs: 0 };

export function step(id: string, status: StepRecord['status'] = 'pending'): StepRecord {
  return { id, uses: 'app.tool', status, attempts: 0, startedAt: null, endedAt: null, args: null, outputs: null, text: '', files: [], policy: null, error: null, history: [] };
}

export function item(index: number, extra: Partial<ItemRecord> = {}): ItemRecord {
  return { index, status: 'succeeded', attempts: 1, args: null, outputs: index, text: '', files: [], error: null, history: [], ...extra };
}

/** A run whose start time is read from its id (`yyyymmdd-hhmmss-…`), as real ids are made. */
export function run(id: string, workflow = 'wf', status: RunRecord['status'] = 'succeeded', steps = [step('a', 'succeeded')]): RunRecord {
  return {
    id,
    workflow,
    status,
    trigger: { type: 'manual' },
    inputs: {},
    startedAt: `${id.slice(0, 4)}-${id.slice(4, 6)}-${id.slice(6, 8)}T${id.slice(9, 11)}:${id.slice(11, 13)}:${id.slice(13, 15)}.${id.slice(16, 19)}Z`,
    endedAt: null,
    dir: '/nowhere',
    apps: {},
    steps,
  };
}

export function save(store: RunStore, record: RunRecord, by = owner): void {
  const { steps, ...rest } = record;
  store.createRun({ run: rest, steps: steps.map(({ items, ...step }) => (items ? { record: step, items } : { record: step })) }, by);
}

/** The id of run number `n` of a day, one second apart. */
function nthId(n: number, suffix = 'aaaa'): string {
  const seconds = String(Math.floor(n / 60) % 60).padStart(2, '0') + String(n % 60).padStart(2, '0');
  return `20260101-${String(Math.floor(n / 3600)).padStart(2, '0')}${seconds}-000-${suffix}`;
}

/**
 * The behaviour every RunStore gives, run against each implementation:
 * `makeStore` gives a fresh, empty store per test.
 */
export function describeRunStoreContract(name: string, makeStore: () => StoreUnderTest): void {
  describe(`${name}: the RunStore contract`, () => {
    // Opening a handle costs a connection (for Redis, a worker thread that loads its client): a test opens the
    // second one only when it plays a second process.
    // Opening a handle costs a connection (for Redis, a worker thread that loads its client): a test opens a
    // second one only when it plays a second process.
    const withHandles = (count: number, use: (handles: RunStore[], artifacts: string) => void | Promise<void>) => async () => {
      const target = makeStore();
      const handles = Array.from({ length: count }, () => target.open());
      try {
        await use(handles, target.artifacts);
      } finally {
        for (const handle of handles) handle.close();
      }
    };
    const withStore = (use: (store: RunStore, artifacts: string) => void | Promise<void>) => withHandles(1, ([store], artifacts) => use(store!, artifacts));
    const withStores = (use: (first: RunStore, second: RunStore, artifacts: string) => void | Promise<void>) =>
      withHandles(2, ([first, second], artifacts) => use(first!, second!, artifacts));

    it(
      'creates, updates and finishes a run; refuses an id twice; the folder always comes from its own layout',
      withStore((store, artifacts) => {
        const record = run('20260101-000000-000-aaaa', 'wf', 'running', [step('a'), step('b')]);
        save(store, record);
        expect(() => save(store, record)).toThrow(/already|UNIQUE/);
        expect(store.getRun(record.id)!.run).toMatchObject({ status: 'running', endedAt: null, dir: join(artifacts, 'wf', record.id) });
        const { steps: _steps, ...rest } = record;
        store.write({ runId: record.id, steps: [{ position: 0, record: { ...step('a', 'succeeded'), outputs: { n: 1 } } }] });
        store.write({ runId: record.id, run: { ...rest, status: 'succeeded', endedAt: '2026-01-01T00:00:05.000Z', durationMs: 5000 } });
        const stored = store.getRun(record.id)!;
        expect(stored.run).toMatchObject({ status: 'succeeded', endedAt: '2026-01-01T00:00:05.000Z', durationMs: 5000 });
        expect(stored.steps.map((s) => [s.record.id, s.record.status, s.record.outputs])).toEqual([
          ['a', 'succeeded', { n: 1 }],
          ['b', 'pending', null],
        ]);
        expect(store.listRuns()).toEqual([expect.objectContaining({ id: record.id, status: 'succeeded', durationMs: 5000, dir: join(artifacts, 'wf', record.id) })]);
        expect(store.listRuns({ status: 'running' })).toEqual([]);
        expect(store.unfinishedRuns()).toEqual([]);
        expect(store.getRun('20990101-000000-000-ffff')).toBeUndefined();
      }),
    );

    it(
      'finds a run by id, unique prefix or `latest`, and says when a prefix is ambiguous or matches nothing',
      withStore((store, artifacts) => {
        save(store, run('20260101-000000-000-aaaa'));
        save(store, run('20260101-000000-000-abbb'));
        expect(findRun(store, artifacts, '20260101-000000-000-ab').id).toBe('20260101-000000-000-abbb');
        expect(findRun(store, artifacts, 'latest').id).toBe('20260101-000000-000-abbb');
        expect(() => findRun(store, artifacts, '20260101-000000-000-a')).toThrow(/ambiguous/);
        expect(() => findRun(store, artifacts, '2027')).toThrow(/no run/);
        expect(store.matchRunIds('20260101', 1)).toEqual(['20260101-000000-000-abbb']);
      }),
    );

    it(
      'keeps steps and foreach items apart, and drops items past a shorter list',
      withStore((store) => {
        const record = run('20260101-000000-000-aaaa', 'wf', 'running', [step('a'), step('b')]);
        save(store, record);
        store.write({ runId: record.id, steps: [{ position: 1, record: step('b', 'running') }], items: [0, 1, 2, 10].map((i) => ({ stepId: 'b', record: item(i) })) });
        expect(store.getRun(record.id)!.steps[1]!.items!.map((i) => i.outputs)).toEqual([0, 1, 2, 10]);
        store.write({ runId: record.id, steps: [{ position: 1, record: step('b', 'running'), itemCount: 2 }] });
        expect(store.getRun(record.id)!.steps.map((s) => [s.record.id, s.record.status, s.items?.map((i) => i.index)])).toEqual([
          ['a', 'pending', undefined],
          ['b', 'running', [0, 1]],
        ]);
      }),
    );

    it(
      'journals intents until their outcome is known; a take-over turns the open ones into outcome unknown',
      withStores((store, second) => {
        const record = run('20260101-000000-000-aaaa', 'wf', 'running', [step('a', 'running'), { ...step('b', 'running'), items: [item(0, { status: 'running' }), item(1)] }]);
        save(store, record, other);
        const intent = { id: 'i1', runId: record.id, stepId: 'a', item: null, attempt: 1, uses: 'app.send', sentAt: '2026-01-01T00:00:01.000Z' };
        const settledIntent = { ...intent, id: 'i0', sentAt: '2026-01-01T00:00:00.500Z' };
        store.write({ runId: record.id, intents: [intent, { ...intent, id: 'i2', stepId: 'b', item: 0, sentAt: '2026-01-01T00:00:02.000Z' }, settledIntent] }, { durable: true });
        store.write({ runId: record.id, settled: [{ id: 'i0', outcome: 'succeeded', endedAt: '2026-01-01T00:00:01.500Z' }] });
        expect(second.openIntents(record.id).map((entry) => [entry.id, entry.item])).toEqual([
          ['i1', null],
          ['i2', 0],
        ]);

        // The owner on another host stopped beating long ago: a second machine takes the run over.
        const taken = takeOverRun(second, second.getRun(record.id)!, { owner, nowMs: Date.parse('2026-01-01T01:00:00Z'), secrets: [] });
        expect(taken.steps[0]).toMatchObject({ status: 'failed', error: { outcome: 'unknown' } });
        expect(second.openIntents(record.id)).toEqual([]);
        const after = store.getRun(record.id)!;
        expect(after.steps[0]!.record).toMatchObject({ status: 'failed', error: { outcome: 'unknown' } });
        expect(after.steps[1]!.items!.map((i) => [i.status, i.error?.outcome])).toEqual([
          ['failed', 'unknown'],
          ['succeeded', undefined],
        ]);
        expect(store.unfinishedRuns()[0]!.owner).toMatchObject({ host: 'here', pid: 1 });
      }),
    );

    it(
      'a take-over fills in a call whose outcome was recovered elsewhere (queue mode: its job) instead of unknown, secrets as references',
      withStores((store, second) => {
        const record = run('20260101-000000-000-aaaa', 'wf', 'running', [step('a', 'running'), step('b', 'running')]);
        save(store, record, other);
        const intent = { id: 'i1', runId: record.id, stepId: 'a', item: null, attempt: 1, uses: 'app.send', sentAt: '2026-01-01T00:00:01.000Z' };
        store.write({ runId: record.id, intents: [intent, { ...intent, id: 'i2', stepId: 'b' }] }, { durable: true });
        const history = [{ attempt: 1, startedAt: '2026-01-01T00:00:01.000Z', endedAt: '2026-01-01T00:00:03.000Z', error: null }];
        const recovered = new Map([['i1', { status: 'succeeded' as const, attempts: 1, outputs: { token: 's3cret-value' }, text: 'sent with s3cret-value', files: ['result.json'], error: null, history }]]);
        const secrets = [{ name: 'TOKEN', value: 's3cret-value' }];

        const taken = takeOverRun(second, second.getRun(record.id)!, { owner, nowMs: Date.parse('2026-01-01T01:00:00Z'), secrets, recovered });
        // The recovered call is succeeded, with what its job returned; the other open intent is unknown as before.
        expect(taken.steps[0]).toMatchObject({ status: 'succeeded', error: null, outputs: { token: 's3cret-value' }, files: ['result.json'], history });
        expect(taken.steps[1]).toMatchObject({ status: 'failed', error: { outcome: 'unknown' } });
        expect(second.openIntents(record.id)).toEqual([]);
        const kept = store.getRun(record.id)!.steps[0]!.record;
        expect(kept).toMatchObject({ status: 'succeeded', text: 'sent with \u001b{TOKEN}', outputs: { token: '\u001b{TOKEN}' } });
      }),
    );

    it(
      'gives a run to a new owner only when the one holding it is not alive; heartbeats and releases only its own',
      withStores((store, second) => {
        const id = '20260101-000000-000-aaaa';
        save(store, run(id, 'wf', 'running'), other);
        expect(second.claimRun(id, owner, () => true)).toEqual({ claimed: false, holder: expect.objectContaining({ host: 'there', pid: 2 }) });
        expect(() => takeOverRun(second, second.getRun(id)!, { owner, nowMs: 1, secrets: [] })).toThrow(/still running/);
        store.heartbeat([id], other, 5000);
        second.heartbeat([id], owner, 9999); // not the holder: no effect
        expect(second.unfinishedRuns()[0]!.owner).toMatchObject({ host: 'there', pid: 2, heartbeatMs: 5000 });
        second.releaseRun(id, owner); // not the holder: no effect
        expect(second.unfinishedRuns()[0]!.owner).toMatchObject({ host: 'there' });
        expect(second.claimRun(id, owner, () => false)).toEqual({ claimed: true });
        expect(store.unfinishedRuns()[0]!.owner).toMatchObject({ host: 'here', pid: 1 });
        expect(store.claimRun(id, owner, () => true)).toEqual({ claimed: true }); // the holder itself
        store.releaseRun(id, owner);
        expect(second.unfinishedRuns()[0]!.owner).toBeNull();
      }),
    );

    it(
      'lists 1,000 runs newest first with workflow, status, since, before, limit and offset',
      withStores((store, second) => {
        const statuses = ['succeeded', 'failed', 'cancelled'] as const;
        for (let n = 0; n < 1000; n++) save(n % 2 ? store : second, run(nthId(n), n % 4 === 0 ? 'one' : 'two', statuses[n % 3]!));
        const ids = (runs: { id: string }[]) => runs.map((r) => r.id);
        expect(ids(second.listRuns({ limit: 3 }))).toEqual([nthId(999), nthId(998), nthId(997)]);
        expect(store.listRuns()).toHaveLength(1000);
        expect(ids(store.listRuns({ workflow: 'one', limit: 2 }))).toEqual([nthId(996), nthId(992)]);
        expect(ids(store.listRuns({ status: 'failed', limit: 2 }))).toEqual([nthId(997), nthId(994)]);
        expect(ids(store.listRuns({ workflow: 'one', status: 'succeeded', limit: 2 }))).toEqual([nthId(996), nthId(984)]);
        expect(ids(store.listRuns({ workflow: 'one', offset: 248 }))).toEqual([nthId(4), nthId(0)]);
        const at = (n: number) => Date.parse(run(nthId(n)).startedAt);
        expect(ids(store.listRuns({ sinceMs: at(998) }))).toEqual([nthId(999), nthId(998)]);
        expect(ids(store.listRuns({ beforeMs: at(2) }))).toEqual([nthId(1), nthId(0)]);
        expect(store.listRuns({ workflow: 'none' })).toEqual([]);
        expect(store.workflowNames()).toEqual(['one', 'two']);
      }),
    );

    it(
      'prunes by age and count, never a run a live process executes, and forgets the workflow with its last run',
      withStore(async (store) => {
        for (let n = 0; n < 5; n++) save(store, run(nthId(n), 'wf', n === 0 ? 'running' : 'succeeded'), n === 0 ? { ...other, heartbeatMs: Date.parse('2026-01-02T00:00:00Z') } : owner);
        save(store, run(nthId(9), 'other'));
        const nowMs = Date.parse('2026-01-02T00:00:30Z');
        const chosen = selectRunsToPrune(store, { workflow: 'wf', maxRuns: 2 }, nowMs);
        expect(chosen.map((r) => r.id)).toEqual([nthId(2), nthId(1)]); // nthId(0) runs on a live host
        await deleteRuns(store, chosen);
        expect(store.listRuns({ workflow: 'wf' }).map((r) => r.id)).toEqual([nthId(4), nthId(3), nthId(0)]);
        expect(store.getRun(nthId(1))).toBeUndefined();
        store.deleteRuns([nthId(9)]);
        expect(store.workflowNames()).toEqual(['wf']);
      }),
    );

    it(
      'finds the newest run of a workflow started by a file with a content hash',
      withStore((store) => {
        const hashed = (id: string, hash: string) => ({ ...run(id), trigger: { type: 'watch' as const, hash } });
        save(store, hashed('20260101-000000-000-aaaa', 'sha256:1'));
        save(store, hashed('20260101-000001-000-aaaa', 'sha256:1'));
        save(store, hashed('20260101-000002-000-aaaa', 'sha256:2'));
        expect(store.findRunByTriggerHash('wf', 'sha256:1')?.id).toBe('20260101-000001-000-aaaa');
        expect(store.findRunByTriggerHash('other', 'sha256:1')).toBeUndefined();
      }),
    );

    it(
      'answers a waiting step once: the first of two answers wins, an expiry only after expiresAt, nothing on a run or step that does not wait',
      withStores((store, second) => {
        const id = '20260101-000000-000-aaaa';
        const approval = { requestedAt: '2026-01-01T00:00:01.000Z', expiresAt: '2026-01-01T01:00:01.000Z' };
        const big = 'z'.repeat(2_000_000); // a large string stays as it was around the answer
        save(store, run(id, 'wf', 'waiting', [{ ...step('gate', 'waiting'), approval, text: big }, step('done', 'succeeded'), step('later')]));
        const at = '2026-01-01T00:30:00.000Z';
        expect(store.answerApproval(id, 'done', { decision: 'approved', by: 'ana', at, via: 'cli' })).toEqual({ answered: false, reason: 'step-not-waiting', stepStatus: 'succeeded' });
        expect(store.answerApproval(id, 'nope', { decision: 'approved', by: 'ana', at, via: 'cli' })).toEqual({ answered: false, reason: 'no-step' });
        expect(store.answerApproval('20990101-000000-000-ffff', 'gate', { decision: 'approved', at, via: 'cli' })).toEqual({ answered: false, reason: 'no-run' });
        expect(store.answerApproval(id, 'gate', { decision: 'expired', at, via: 'timeout' })).toMatchObject({ answered: false, reason: 'not-expired' });

        // Two processes answer: one wins, the other is told what was recorded.
        const first = store.answerApproval(id, 'gate', { decision: 'approved', by: 'ana', at, via: 'cli' });
        const late = second.answerApproval(id, 'gate', { decision: 'denied', by: 'bo', at: '2026-01-01T00:30:01.000Z', via: 'ui' });
        expect(first).toEqual({ answered: true, approval: { ...approval, decision: 'approved', by: 'ana', at, via: 'cli' } });
        expect(late).toEqual({ answered: false, reason: 'answered', approval: { ...approval, decision: 'approved', by: 'ana', at, via: 'cli' } });
        const stored = second.getRun(id)!.steps[0]!.record;
        expect(stored).toMatchObject({ status: 'waiting', approval: { decision: 'approved', by: 'ana' } });
        expect(stored.text === big).toBe(true);

        // A run that is not waiting (resumed meanwhile) takes no answer.
        const other = '20260101-000001-000-aaaa';
        save(store, run(other, 'wf', 'running', [{ ...step('gate', 'waiting'), approval }]));
        expect(second.answerApproval(other, 'gate', { decision: 'denied', by: 'bo', at, via: 'cli' })).toEqual({ answered: false, reason: 'run-not-waiting', runStatus: 'running' });
        expect(store.listRuns({ status: 'waiting' }).map((r) => r.id)).toEqual([id]);
      }),
    );

    it(
      'an answer after expiresAt records the expiry instead; the expiry and a person race, one wins',
      withStores((store, second) => {
        const id = '20260101-000000-000-aaaa';
        const approval = { requestedAt: '2026-01-01T00:00:01.000Z', expiresAt: '2026-01-01T00:00:02.000Z' };
        save(store, run(id, 'wf', 'waiting', [{ ...step('a', 'waiting'), approval }, { ...step('b', 'waiting'), approval }]));
        const at = '2026-01-01T00:00:03.000Z';
        expect(store.answerApproval(id, 'a', { decision: 'approved', by: 'ana', at, via: 'cli' })).toEqual({ answered: true, approval: { ...approval, decision: 'expired', at, via: 'timeout' } });
        expect(store.answerApproval(id, 'b', { decision: 'expired', at, via: 'timeout' })).toMatchObject({ answered: true });
        expect(second.answerApproval(id, 'b', { decision: 'denied', by: 'bo', at, via: 'cli' })).toMatchObject({ answered: false, reason: 'answered', approval: { decision: 'expired' } });
      }),
    );

    it(
      'gives back large strings exactly (steps, items, run inputs), also after items are trimmed',
      withStores((store, second) => {
        const text = `${'x'.repeat(3_000_000)}"\u{1F600}\ud800\\`; // a pair, a lone surrogate, escapes
        const other = `${'y'.repeat(1_500_000)}`;
        const id = '20260101-000000-000-aaaa';
        const record = { ...run(id, 'wf', 'running', [{ ...step('a'), text, items: [item(0, { args: { text } }), item(1, { args: { other } })] }]), inputs: { doc: text } };
        save(store, record);
        const stored = second.getRun(id)!;
        expect(stored.run.inputs.doc === text).toBe(true);
        expect(stored.steps[0]!.record.text === text).toBe(true);
        expect(stored.steps[0]!.items!.map((i) => Object.values(i.args as object)[0].length)).toEqual([text.length, other.length]);
        store.write({ runId: id, steps: [{ position: 0, record: { ...step('a'), text: 'small now' }, itemCount: 1 }] });
        const after = second.getRun(id)!;
        expect(after.steps[0]!.record.text).toBe('small now');
        expect(after.steps[0]!.items!.map((i) => (i.args as { text: string }).text === text)).toEqual([true]);
        expect(after.run.inputs.doc === text).toBe(true);
      }),
    );
  });
}
