import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { faultyWorkspace } from '../helpers/faulty-workspace.js';
import { startServe, type Event, type Serve } from '../helpers/serve.js';
import { type Workspace } from '../helpers/workspace.js';

// Approvals that wait (`policy.headless-ask: wait`): the built CLI, a real
// fixture app whose `purge` tool is destructive, and answers given from another
// process than the one that waits (the CLI in this process, serve/cron/watch
// spawned). Nothing here has a TTY, so every `ask` is headless.

const ofType = (events: Event[], type: string) => events.filter((event) => event.type === type);

/** A workspace with the faulty app (side effects counted in counter.txt) and `policy:` as given. */
const approvalWorkspace = (policy: string) => faultyWorkspace({}, `policy: ${policy}\n`);

/** purge (destructive: ask) → after; `other` goes on beside them. */
const STEPS = [
  'steps:',
  '  - id: purge',
  '    uses: faulty.purge',
  '    with: { label: old }',
  '  - id: after',
  '    uses: faulty.work',
  '    needs: [purge]',
  '    with: { label: after }',
  '  - id: other',
  '    uses: faulty.work',
  '    with: { label: other }',
  '',
].join('\n');

const readRecord = (ws: Workspace, workflow: string, runId: string) => JSON.parse(readFileSync(join(ws.artifacts, workflow, runId, 'run.json'), 'utf8'));
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('runner run with headless-ask: wait', () => {
  it('waits (exit 1) with nothing sent, resume refuses while unanswered, then approve + resume runs it once', async () => {
    const ws = approvalWorkspace('{ headless-ask: wait }');
    const workflow = ws.write('wf.yaml', `name: wf\n${STEPS}`);
    const first = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
    expect(first.code).toBe(1);
    const record = JSON.parse(first.stdout);
    expect(record.status).toBe('waiting');
    expect(record.endedAt).toBeNull();
    expect(Object.fromEntries(record.steps.map((step: any) => [step.id, step.status]))).toEqual({ purge: 'waiting', after: 'pending', other: 'succeeded' });
    const purge = record.steps[0];
    expect(purge.approval).toEqual({ requestedAt: expect.stringMatching(ISO), expiresAt: expect.stringMatching(ISO) });
    expect(Date.parse(purge.approval.expiresAt) - Date.parse(purge.approval.requestedAt)).toBe(24 * 3_600_000);
    expect(purge.error).toBeNull();
    expect(ws.sideEffects()).toEqual(['other']); // the other branch went on; nothing was sent for purge
    expect(first.stderr).toContain(`runner approve ${record.id} purge`);
    expect(first.stderr).toContain(`runner deny ${record.id} purge`);

    // The store says so too, for every process.
    const listed = await runInProcess(['--config', ws.config, 'runs', '--status', 'waiting', '--json'], { cwd: ws.dir });
    expect(JSON.parse(listed.stdout).map((run: any) => run.id)).toEqual([record.id]);

    const early = await runInProcess(['--config', ws.config, 'resume', record.id], { cwd: ws.dir });
    expect(early.code).toBe(1);
    expect(early.stderr).toContain(`run ${record.id} is still waiting for an approval of purge`);
    expect(ws.sideEffects()).toEqual(['other']);

    // Answers that do not fit: exit 2, nothing recorded.
    const notWaiting = await runInProcess(['--config', ws.config, 'approve', record.id, 'other'], { cwd: ws.dir });
    expect(notWaiting.code).toBe(2);
    expect(notWaiting.stderr).toContain(`step other of run ${record.id} is not waiting for an approval (its status: succeeded)`);
    expect(notWaiting.stderr).toContain('steps waiting in run');
    const noStep = await runInProcess(['--config', ws.config, 'deny', record.id, 'nope'], { cwd: ws.dir });
    expect(noStep.code).toBe(2);
    expect(noStep.stderr).toContain(`run ${record.id} has no step \`nope\``);

    const approved = await runInProcess(['--config', ws.config, 'approve', record.id, 'purge', '--json'], { cwd: ws.dir, env: { RUNNER_USER: 'ana' } });
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout).approval).toMatchObject({ decision: 'approved', by: 'ana', at: expect.stringMatching(ISO), via: 'cli' });
    expect(readRecord(ws, 'wf', record.id).steps[0].approval.decision).toBe('approved'); // run.json follows the store
    const again = await runInProcess(['--config', ws.config, 'deny', record.id, 'purge'], { cwd: ws.dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('was answered already: approved by ana');
    expect(ws.sideEffects()).toEqual(['other']); // answering runs nothing

    const resumed = await runInProcess(['--config', ws.config, 'resume', record.id, '--json'], { cwd: ws.dir });
    expect(resumed.code).toBe(0);
    const final = JSON.parse(resumed.stdout);
    expect(final.status).toBe('succeeded');
    expect(final.steps.map((step: any) => step.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(final.steps[0].approval).toMatchObject({ decision: 'approved', by: 'ana' });
    expect(final.steps[0].policyReason).toBe('destructive; approved by ana');
    expect(ws.sideEffects()).toEqual(['other', 'purge old', 'after']);
  }, 90_000);

  it('a denied step ends denied with nothing sent, its dependents skipped', async () => {
    const ws = approvalWorkspace('{ headless-ask: wait }');
    const workflow = ws.write('wf.yaml', `name: wf\n${STEPS}`);
    const first = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
    const { id } = JSON.parse(first.stdout);
    const denied = await runInProcess(['--config', ws.config, 'deny', id, 'purge'], { cwd: ws.dir, env: { RUNNER_USER: 'bo' } });
    expect(denied.code).toBe(0);
    expect(denied.stdout).toContain(`denied step purge of run ${id} as bo`);
    const resumed = await runInProcess(['--config', ws.config, 'resume', id, '--json'], { cwd: ws.dir });
    expect(resumed.code).toBe(1);
    const final = JSON.parse(resumed.stdout);
    expect(final.status).toBe('failed');
    expect(final.steps[0]).toMatchObject({ status: 'denied', error: { kind: 'policy', outcome: 'not-sent' }, approval: { decision: 'denied', by: 'bo' } });
    expect(final.steps[0].error.message).toContain('denied by bo');
    expect(final.steps[1].status).toBe('skipped');
    expect(ws.sideEffects()).toEqual(['other']);
  }, 60_000);

  it('foreach: one approval covers the step, its items wait together and all run once approved', async () => {
    const ws = approvalWorkspace('{ headless-ask: wait }');
    const workflow = ws.write(
      'fe.yaml',
      'name: fe\ninputs:\n  list: { type: array, default: [1, 2, 3] }\nsteps:\n  - id: purge\n    uses: faulty.purge\n    foreach: ${{ inputs.list }}\n    with: { label: "${{ item }}" }\n',
    );
    const first = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
    expect(first.code).toBe(1);
    const record = JSON.parse(first.stdout);
    expect(record.steps[0]).toMatchObject({ status: 'waiting', error: null, approval: { requestedAt: expect.stringMatching(ISO) } });
    expect(record.steps[0].items.map((item: any) => item.status)).toEqual(['waiting', 'waiting', 'waiting']);
    expect(ws.sideEffects()).toEqual([]);
    expect((await runInProcess(['--config', ws.config, 'approve', record.id, 'purge'], { cwd: ws.dir })).code).toBe(0);
    const resumed = await runInProcess(['--config', ws.config, 'resume', record.id, '--json'], { cwd: ws.dir });
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout).steps[0].items.map((item: any) => item.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(ws.sideEffects()).toEqual(['purge 1', 'purge 2', 'purge 3']);
  }, 60_000);

  it('runner call never waits: it has nothing to resume, so a headless ask is denied', async () => {
    const ws = approvalWorkspace('{ headless-ask: wait }');
    const call = await runInProcess(['--config', ws.config, 'call', 'faulty.purge', 'label=x', '--json'], { cwd: ws.dir });
    expect(call.code).toBe(1);
    expect(JSON.parse(call.stdout).steps[0]).toMatchObject({ status: 'denied', error: { kind: 'policy' } });
    expect(ws.sideEffects()).toEqual([]);
  });

  it('headless-ask: deny (the default) still denies at once', async () => {
    const ws = approvalWorkspace('{ destructive: ask }');
    const workflow = ws.write('wf.yaml', `name: wf\n${STEPS}`);
    const run = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
    expect(run.code).toBe(1);
    const record = JSON.parse(run.stdout);
    expect(record.status).toBe('failed');
    expect(record.steps[0]).toMatchObject({ status: 'denied' });
    expect(record.steps[0].approval).toBeUndefined();
  });
});

/**
 * A cron workflow due every second. Its first run waits for an approval, and
 * while it waits `overlap: skip` (the default) skips the next occurrences: one
 * run to answer, at once, with no minute boundary to wait for.
 */
function everySecond(name: string): string {
  return `name: ${name}\non:\n  schedule:\n    - cron: "* * * * * *"\n${STEPS}`;
}

/** Side effects other than the `other` branch, which every run of these workflows has. */
const purges = (ws: { sideEffects: () => string[] }) => ws.sideEffects().filter((line) => line !== 'other').sort();

async function untilFinished(serve: Serve, workflow: string, status: string): Promise<Event> {
  const match = (event: Event) => event.type === 'run-finished' && event.workflow === workflow && event.status === status;
  await serve.until((events) => events.some(match), `${workflow} ${status}`, 40_000);
  return serve.events.find(match)!;
}

// Each test has its own workspace and serve, and mostly waits on a schedule: they run at once.
/** No look at waiting runs for ten minutes but the one the write of run.json wakes. */
const SLOW_POLL = { RUNNER_APPROVAL_POLL_MS: String(10 * 60_000) };

describe.concurrent('runner serve with headless-ask: wait', () => {
  it('a cron run pauses, is approved from another process, and completes without a restart; a denied one sends nothing', async ({ expect, onTestFinished }) => {
    const ws = approvalWorkspace('{ headless-ask: wait }');
    ws.write('workflows/keep.yaml', everySecond('keep'));
    ws.write('workflows/drop.yaml', everySecond('drop'));
    // Serve would not look again for ten minutes: it sees the answers because answering rewrites run.json.
    const serve = startServe(ws, ['serve'], { onTestFinished }, SLOW_POLL);
    const [keep, drop] = [await untilFinished(serve, 'keep', 'waiting'), await untilFinished(serve, 'drop', 'waiting')];
    expect(keep.summary).toContain(`runner approve ${keep.runId} purge`);
    const stored = await runInProcess(['--config', ws.config, 'runs', 'show', keep.runId, '--json'], { cwd: ws.dir });
    expect(JSON.parse(stored.stdout).steps[0].status).toBe('waiting');
    expect(ws.sideEffects()).toEqual(['other', 'other']); // one run of each, no purge sent

    const [approved, denied] = await Promise.all([
      runInProcess(['--config', ws.config, 'approve', keep.runId, 'purge'], { cwd: ws.dir, env: { RUNNER_USER: 'ana' } }),
      runInProcess(['--config', ws.config, 'deny', drop.runId, 'purge'], { cwd: ws.dir, env: { RUNNER_USER: 'bo' } }),
    ]);
    expect([approved.code, denied.code]).toEqual([0, 0]);
    await untilFinished(serve, 'keep', 'succeeded');
    await untilFinished(serve, 'drop', 'failed');
    const answered = ofType(serve.events, 'answered').filter((event) => event.runId === keep.runId || event.runId === drop.runId);
    expect(answered.map((event) => [event.workflow, event.steps[0].decision, event.steps[0].by]).sort()).toEqual([
      ['drop', 'denied', 'bo'],
      ['keep', 'approved', 'ana'],
    ]);
    expect(await serve.stop('SIGTERM')).toBe(0);

    const kept = readRecord(ws, 'keep', keep.runId);
    expect(kept.status).toBe('succeeded');
    expect(kept.steps[0].approval).toMatchObject({ decision: 'approved', by: 'ana', at: expect.stringMatching(ISO), via: 'cli' });
    const dropped = readRecord(ws, 'drop', drop.runId);
    expect(dropped.steps.map((step: any) => step.status)).toEqual(['denied', 'skipped', 'succeeded']);
    expect(dropped.steps[0].error.kind).toBe('policy');
    // The approved purge ran exactly once, the denied one never (later runs of both schedules wait again).
    expect(purges(ws)).toEqual(['after', 'purge old']);
  }, 90_000);

  it('a waiting run holds back its schedule under overlap: skip, until it is answered and ends', async ({ expect, onTestFinished }) => {
    const ws = approvalWorkspace('{ headless-ask: wait }');
    ws.write('workflows/tick.yaml', everySecond('tick'));
    const serve = startServe(ws, ['cron'], { onTestFinished }, SLOW_POLL);
    const waiting = await untilFinished(serve, 'tick', 'waiting');
    const pausedAt = serve.events.length;
    const skippedWhileWaiting = (events: Event[]) =>
      events.slice(pausedAt).some((event) => event.type === 'trigger' && event.action === 'skipped' && /overlap: skip/.test(event.reason));
    await serve.until(skippedWhileWaiting, 'an occurrence skipped while the run waits');
    expect(serve.events.slice(pausedAt).filter((event) => event.type === 'trigger' && event.action === 'run')).toEqual([]);

    expect((await runInProcess(['--config', ws.config, 'approve', waiting.runId, 'purge'], { cwd: ws.dir })).code).toBe(0);
    await untilFinished(serve, 'tick', 'succeeded');
    // Ended for good: the schedule runs again.
    await serve.until((events) => events.some((event) => event.type === 'run-finished' && event.runId !== waiting.runId), 'the next occurrence to run');
    expect(await serve.stop('SIGTERM')).toBe(0);
    expect(purges(ws)).toEqual(['after', 'purge old']);
  }, 90_000);

  it('a watched file stays claimed while its run waits, and moves to done/ once it is approved and ends', async ({ expect, onTestFinished }) => {
    const ws = approvalWorkspace('{ headless-ask: wait }');
    ws.write(
      'workflows/inbox.yaml',
      `name: inbox\non:\n  watch:\n    paths: ["in/*.txt"]\n    debounce: 100ms\n    claim: move\n${STEPS}`,
    );
    const serve = startServe(ws, ['watch'], { onTestFinished });
    await serve.until((events) => ofType(events, 'ready').length === 1, 'ready');
    ws.write('in/order.txt', 'one\n');
    const waiting = await untilFinished(serve, 'inbox', 'waiting');
    expect(waiting.movedTo).toBeUndefined();
    expect(existsSync(join(ws.dir, 'processing', 'order.txt'))).toBe(true);

    expect((await runInProcess(['--config', ws.config, 'approve', waiting.runId, 'purge'], { cwd: ws.dir })).code).toBe(0);
    const done = await untilFinished(serve, 'inbox', 'succeeded');
    expect(done.movedTo).toBe(join(ws.dir, 'done', 'order.txt'));
    expect(await serve.stop('SIGTERM')).toBe(0);
    expect(purges(ws)).toEqual(['after', 'purge old']);
  }, 90_000);

  it('a waiting run outlives its serve: stopping does not wait for it, the next serve continues it once answered', async ({ expect, onTestFinished }) => {
    const ws = approvalWorkspace('{ headless-ask: wait }');
    ws.write('workflows/keep.yaml', everySecond('keep'));
    const first = startServe(ws, ['serve'], { onTestFinished });
    const waiting = await untilFinished(first, 'keep', 'waiting');
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(ofType(first.events, 'stopping')[0].inFlight).toBe(0);

    // Answered while no runner serves it; the next serve finds it at start and goes on.
    expect((await runInProcess(['--config', ws.config, 'approve', waiting.runId, 'purge'], { cwd: ws.dir, env: { RUNNER_USER: 'ana' } })).code).toBe(0);
    const second = startServe(ws, ['serve'], { onTestFinished });
    await untilFinished(second, 'keep', 'succeeded');
    expect(ofType(second.events, 'answered')).toEqual([expect.objectContaining({ runId: waiting.runId, steps: [expect.objectContaining({ id: 'purge', decision: 'approved', by: 'ana' })] })]);
    expect(await second.stop('SIGTERM')).toBe(0);
    expect(readRecord(ws, 'keep', waiting.runId).status).toBe('succeeded');
    expect(purges(ws)).toEqual(['after', 'purge old']);
  }, 90_000);

  it('an unanswered approval expires after approval-timeout: the run ends with the step denied', async ({ expect, onTestFinished }) => {
    const ws = approvalWorkspace('{ headless-ask: wait, approval-timeout: 1s }');
    ws.write('workflows/late.yaml', everySecond('late'));
    const serve = startServe(ws, ['cron'], { onTestFinished });
    const waiting = await untilFinished(serve, 'late', 'waiting');
    const failed = await untilFinished(serve, 'late', 'failed');
    expect(failed.runId).toBe(waiting.runId);
    expect(ofType(serve.events, 'answered').find((event) => event.runId === waiting.runId)!.steps).toEqual([{ id: 'purge', decision: 'expired', at: expect.stringMatching(ISO) }]);
    expect(await serve.stop('SIGTERM')).toBe(0);
    const record = readRecord(ws, 'late', waiting.runId);
    expect(record.steps[0]).toMatchObject({ status: 'denied', error: { kind: 'policy' }, approval: { decision: 'expired', via: 'timeout' } });
    expect(record.steps[0].approval.by).toBeUndefined();
    expect(Date.parse(record.steps[0].approval.at)).toBeGreaterThanOrEqual(Date.parse(record.steps[0].approval.expiresAt));
    expect(purges(ws)).toEqual([]);
    // Too late for a person: the expiry stands.
    const late = await runInProcess(['--config', ws.config, 'approve', waiting.runId, 'purge'], { cwd: ws.dir });
    expect(late.code).toBe(2);
  }, 90_000);
});
