import { describe, expect, it } from 'vitest';
import { startServe, type Event } from '../helpers/serve.js';
import { shiftingWorkspace, type ShiftingTool } from '../helpers/shifting-workspace.js';
import { runInProcess } from '../helpers/in-process.js';

// An approval answered after the tool it gates changed: serve must not send
// the call, and must not keep the run to itself either, so that `runner
// resume` can continue it once the lock fits again.

const purge = (description: string): ShiftingTool => ({
  name: 'purge',
  description,
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
});

describe('an approved run whose tool changed while it waited', () => {
  it('is refused by the lock under serve with nothing sent, and runner resume continues it after runner lock --update', async () => {
    const ws = shiftingWorkspace([purge('Purges old entries')], 'policy: { headless-ask: wait }\n');
    ws.write('workflows/tick.yaml', 'name: tick\non:\n  schedule:\n    - cron: "* * * * * *"\nsteps:\n  - id: purge\n    uses: notes.purge\n');
    expect((await runInProcess(['lock'], { cwd: ws.dir })).code).toBe(0);

    const serve = startServe(ws, ['cron']);
    const isWaiting = (event: Event) => event.type === 'run-finished' && event.status === 'waiting';
    await serve.until((events) => events.some(isWaiting), 'a run waiting for its approval', 40_000);
    const runId = serve.events.find(isWaiting)!.runId as string;

    // While it waits, the tool is redefined and the new definition accepted into the lock (from a fresh app process);
    // serve's own connection still lists the old one, which no longer fits the lock.
    ws.setTools([purge('Purges every entry, old or new')]);
    expect((await runInProcess(['lock', '--update'], { cwd: ws.dir })).code).toBe(0);
    expect((await runInProcess(['approve', runId, 'purge'], { cwd: ws.dir })).code).toBe(0);

    const refusedIt = (event: Event) => event.type === 'run-refused' && event.runId === runId;
    await serve.until((events) => events.some(refusedIt), 'the continued run refused by the lock', 40_000);
    expect(serve.events.find(refusedIt)!.reason).toContain(`runner resume ${runId}`);
    expect(ws.calls()).toEqual([]);

    // serve is still running, and no longer holds the run: resume takes it, with an app that lists what the lock says.
    const resumed = await runInProcess(['resume', runId, '--json'], { cwd: ws.dir });
    expect(resumed.stderr).not.toContain('is still running');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ id: runId, status: 'succeeded', steps: [{ id: 'purge', status: 'succeeded', approval: { decision: 'approved' } }] });
    expect(await serve.stop('SIGTERM')).toBe(0);
    expect(ws.calls()).toEqual(['purge']);
  }, 120_000);
});
