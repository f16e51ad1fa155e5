import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { isAlive } from '../../src/apps/process-tree.js';
import { runFaulty } from '../helpers/faulty-workspace.js';

/** A first step that starts the app, for tests about a call that was sent: a step's timeout also covers reaching its app. */
const WARM_UP = '  - id: warm\n    uses: faulty.echo\n    with: { text: warm }\n';

// Each test runs its own workflow against its own app process, and much of each is waiting on it: they run at once.
describe.concurrent('the executor through the CLI', () => {
  describe('limits (docs/config.md, Limits)', () => {
    it('never has more calls in flight to an app than its concurrency, measured inside the app', async ({ expect }) => {
      const run = await runFaulty('  - id: fan\n    uses: faulty.concurrent\n    foreach: ${{ inputs.n }}\n    with: { delayMs: 60 }\n', {
        appYaml: '    concurrency: 3\n',
        workflowYaml: 'concurrency: 10\ninputs:\n  n: { type: array, default: [1,2,3,4,5,6,7,8,9,10,11,12] }\n',
      });
      expect(run.code).toBe(0);
      const peaks = run.sideEffects().map((line) => Number(line.split(' ')[2]));
      expect(peaks).toHaveLength(12);
      expect(Math.max(...peaks)).toBe(3);
      expect(run.step('fan').items).toHaveLength(12);
    });

    it('the workflow limit nests inside the app limit', async ({ expect }) => {
      const run = await runFaulty('  - id: fan\n    uses: faulty.concurrent\n    foreach: ${{ inputs.n }}\n    with: { delayMs: 60 }\n', {
        appYaml: '    concurrency: 8\n',
        workflowYaml: 'concurrency: 2\ninputs:\n  n: { type: array, default: [1,2,3,4,5,6,7,8] }\n',
      });
      expect(run.code).toBe(0);
      expect(Math.max(...run.sideEffects().map((line) => Number(line.split(' ')[2])))).toBe(2);
    });

    it('a rate delays calls instead of dropping them', async ({ expect }) => {
      const run = await runFaulty('  - id: fan\n    uses: faulty.concurrent\n    foreach: ${{ inputs.n }}\n    with: { delayMs: 1 }\n', {
        appYaml: '    rate: 3/s\n',
        workflowYaml: 'inputs:\n  n: { type: array, default: [1,2,3,4,5,6,7] }\n',
      });
      expect(run.code).toBe(0);
      const starts = run.sideEffects().map((line) => Number(line.split(' ')[1])).sort((a, b) => a - b);
      expect(starts).toHaveLength(7); // none dropped
      expect(run.step('fan').items.every((item: { status: string }) => item.status === 'succeeded')).toBe(true);
      // 3 per second puts the 7th call two seconds after the 1st. Times taken inside the app carry the
      // transport's jitter, so only a bound a whole interval short of that is checked here; the exact
      // schedule is checked on fake time in test/unit/limits.test.ts.
      expect(starts[6]! - starts[0]!).toBeGreaterThanOrEqual(1000);
    });
  });

  describe('retries (docs/apps.md, Retries)', () => {
    it('retries an idempotent call after the app died, on a restarted app, recording each attempt', async ({ expect }) => {
      const run = await runFaulty('  - id: a\n    uses: faulty.crash_once\n    retry: { attempts: 3, delay: 20ms }\n');
      expect(run.code).toBe(0);
      expect(run.step('a')).toMatchObject({ status: 'succeeded', attempts: 2, outputs: { recovered: true } });
      expect(run.step('a').history).toHaveLength(2);
      expect(run.step('a').history[0].error.kind).toBe('transport');
      expect(run.step('a').history[1].error).toBeNull();
    });

    it('never repeats a non-idempotent call that timed out after it was sent: the side effect happened exactly once', async ({ expect }) => {
      // `warm` starts the app first: the step's timeout covers reaching the app, and this test is about a call that was sent.
      const run = await runFaulty(`${WARM_UP}  - id: a\n    needs: warm\n    uses: faulty.work\n    with: { delayMs: 3000, label: once }\n    timeout: 300ms\n    retry: { attempts: 4, delay: 10ms }\n`);
      expect(run.code).toBe(1);
      expect(run.step('a')).toMatchObject({ status: 'failed', attempts: 1, error: { kind: 'timeout', outcome: 'unknown' } });
      expect(run.sideEffects()).toEqual(['once']);
    });

    it('repeats it when the step says retry.unsafe', async ({ expect }) => {
      const run = await runFaulty('  - id: a\n    uses: faulty.crash\n    with: { afterSideEffect: true }\n    retry: { attempts: 3, delay: 10ms, unsafe: true }\n');
      expect(run.step('a')).toMatchObject({ status: 'failed', attempts: 3, error: { kind: 'transport' } });
      expect(run.sideEffects()).toEqual(['crash', 'crash', 'crash']);
    });

    it('retries tool errors only where the step asks', async ({ expect }) => {
      const plain = await runFaulty('  - id: a\n    uses: faulty.fail\n    retry: { attempts: 3, delay: 10ms }\n');
      expect(plain.step('a').attempts).toBe(1);
      const asked = await runFaulty('  - id: a\n    uses: faulty.fail\n    retry: { attempts: 3, delay: 10ms, on: [tool] }\n');
      expect(asked.step('a')).toMatchObject({ status: 'failed', attempts: 3, error: { kind: 'tool' } });
    });
  });

  // idle-timeout (progress resets it, silence ends the call) is checked on the fake clock in test/unit/executor.test.ts.
  describe('timeouts', () => {
    it('a timeout cancels the request at the app (notifications/cancelled)', async ({ expect }) => {
      const run = await runFaulty(`${WARM_UP}  - id: a\n    needs: warm\n    uses: faulty.hang\n    timeout: 300ms\n`);
      expect(run.step('a').error.kind).toBe('timeout');
      expect(run.sideEffects()).toEqual(['hang cancelled']);
    });
  });

  describe('app supervision', () => {
    it('restarts an app that died for the next step that needs it', async ({ expect }) => {
      const run = await runFaulty(
        '  - id: boom\n    uses: faulty.crash\n    continue-on-error: true\n  - id: after\n    uses: faulty.echo\n    needs: [boom]\n    with: { text: alive }\n',
        { process: true },
      );
      expect(run.step('boom').error.kind).toBe('transport');
      expect(run.step('after')).toMatchObject({ status: 'succeeded', text: 'alive' });
      expect(run.code).toBe(0);
    });

    it('survives junk on stdout and a slow start', async ({ expect }) => {
      const run = await runFaulty('  - id: a\n    uses: faulty.echo\n    with: { text: ok }\n', { appFlags: ['--junk-stdout', '--slow-start', '300'] });
      expect(run.code).toBe(0);
      expect(run.step('a').text).toBe('ok');
    });

    it('names the app and shows its stderr when the handshake fails', async ({ expect }) => {
      const run = await runFaulty('  - id: a\n    uses: faulty.echo\n', { appFlags: ['--fail-handshake'] });
      expect(run.code).toBe(1);
      expect(run.step('a').error.kind).toBe('unavailable');
      expect(run.step('a').error.message).toMatch(/app `faulty` .* failed to start/);
      expect(run.step('a').error.message).toContain('faulty: refusing handshake');
    });

    it('kills an app that ignores SIGTERM and stdin closing, once its stop-timeout has passed twice', async ({ expect }) => {
      const run = await runFaulty('  - id: a\n    uses: faulty.echo\n', {
        appFlags: ['--ignore-sigterm', '--ignore-stdin-close', '--pid-file', 'PID'],
        appYaml: '    stop-timeout: 300ms\n',
      });
      expect(run.code).toBe(0);
      const pids = readFileSync(join(run.ws.dir, 'PID'), 'utf8').split('\n').filter(Boolean).map(Number);
      expect(pids.length).toBeGreaterThan(0);
      for (const pid of pids) expect(isAlive(pid)).toBe(false);
      // Its stop-timeout is set, so SIGTERM is expected and only SIGKILL is worth a warning; the app's log has both.
      expect(run.stderr).toContain('warning: app `faulty` did not exit within 300ms of SIGTERM either; runner killed it (SIGKILL)\n');
      expect(run.stderr).not.toContain('runner sent it SIGTERM');
      const log = readFileSync(join(run.record.dir, 'logs', 'faulty.log'), 'utf8');
      expect(log).toContain('(runner: the app did not exit within 300ms of its stdin closing; runner sent it SIGTERM)\n');
      expect(log).toContain('(runner: the app did not exit within 300ms of SIGTERM either; runner killed it (SIGKILL))\n');
    });

    it('says why it waited for an app with the default stop-timeout that stays up after its stdin closes, and how to wait less', async ({ expect }) => {
      const run = await runFaulty('  - id: a\n    uses: faulty.echo\n    with: { text: ok }\n', { appFlags: ['--ignore-stdin-close'] });
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(
        'warning: app `faulty` did not exit within 2s of its stdin closing; runner sent it SIGTERM (if it never exits on its own, a shorter `stop-timeout` for it in the config ends this wait sooner)\n',
      );
      expect(run.stderr).not.toContain('SIGKILL');
      // Printed once the run was over: its record came first.
      expect(run.stderr.indexOf('warning: app')).toBeGreaterThan(run.stderr.indexOf('succeeded in'));
    });

    it('warns of nothing when an app exits as its stdin closes', async ({ expect }) => {
      const run = await runFaulty('  - id: a\n    uses: faulty.echo\n    with: { text: ok }\n', { appFlags: ['--pid-file', 'PID'] });
      expect(run.code).toBe(0);
      expect(run.stderr).not.toContain('warning:');
      expect(readFileSync(join(run.record.dir, 'logs', 'faulty.log'), 'utf8')).not.toContain('(runner:');
    });
  });

  describe('permission policy (docs/config.md, Permission policy)', () => {
    it('rules beat lying annotations: nothing is sent', async ({ expect }) => {
      const run = await runFaulty('  - id: a\n    uses: faulty.lie_delete\n', { configYaml: 'policy:\n  rules:\n    - { match: "faulty.lie_*", action: deny }\n' });
      expect(run.code).toBe(1);
      expect(run.step('a')).toMatchObject({ status: 'denied', policy: 'deny', error: { kind: 'policy' } });
      expect(run.sideEffects()).toEqual([]);
    });

    it('a tool without annotations is destructive: ask, denied without a TTY unless --allow matches', async ({ expect }) => {
      const denied = await runFaulty('  - id: a\n    uses: faulty.no_annotations\n');
      expect(denied.step('a').status).toBe('denied');
      expect(denied.step('a').error.message).toContain('--allow faulty.no_annotations');
      const allowed = await runFaulty('  - id: a\n    uses: faulty.no_annotations\n', { cliArgs: ['--allow', 'faulty.no_*'], configYaml: 'policy:\n  open-world: allow\n' });
      expect(allowed.step('a')).toMatchObject({ status: 'succeeded', policy: 'allow' });
    });

    it('a denial tolerated by continue-on-error does not hold back the steps that need it', async ({ expect }) => {
      const run = await runFaulty('  - id: a\n    uses: faulty.no_annotations\n    continue-on-error: true\n  - id: b\n    uses: faulty.echo\n    needs: [a]\n    with: { text: after }\n');
      expect(run.code).toBe(0);
      expect(run.step('a').status).toBe('denied');
      expect(run.step('b')).toMatchObject({ status: 'succeeded', text: 'after' });
    });
  });

  describe('elicitation', () => {
    for (const era of ['modern', 'legacy'] as const) {
      const appFlags = era === 'legacy' ? ['--legacy-only'] : [];
      it(`answers from the step's elicit map, and declines without a TTY (${era} era)`, async ({ expect }) => {
        // On 2025 a question cannot be tied to one of several calls in flight, so there the steps run one after the other.
        const order = era === 'legacy' ? '    needs: [answered]\n' : '';
        const run = await runFaulty(`  - id: answered\n    uses: faulty.ask_name\n    elicit: { name: Ada }\n  - id: nobody\n    uses: faulty.ask_name\n${order}`, { appFlags });
        expect(run.code).toBe(0);
        expect(run.record.apps.faulty.protocolVersion).toMatch(era === 'modern' ? /^2026-07-28$/ : /^2025-/);
        expect(run.step('answered').text).toBe('hello Ada');
        expect(run.step('answered').elicitations).toEqual([{ message: 'What is your name?', action: 'accept', answered: ['name'], source: 'workflow' }]);
        expect(run.step('nobody').text).toBe('declined');
        expect(run.step('nobody').elicitations).toEqual([{ message: 'What is your name?', action: 'decline', answered: [], source: 'none' }]);
      });
    }
  });

  describe('arguments', () => {
    it('passes a number or boolean as its string form where the inputSchema wants a string, and names the item that still does not fit', async ({ expect }) => {
      const run = await runFaulty(
        '  - id: each\n    uses: faulty.echo\n    foreach: [1, 2.5, true]\n    with: { text: "${{ item }}" }\n' +
          '  - id: worse\n    uses: faulty.echo\n    foreach: [x, [1]]\n    with: { text: "${{ item }}" }\n    continue-on-error: true\n',
      );
      expect(run.step('each')).toMatchObject({ status: 'succeeded', text: ['1', '2.5', 'true'], args: [{ text: '1' }, { text: '2.5' }, { text: 'true' }] });
      expect(run.step('worse').status).toBe('failed');
      expect(run.step('worse').error.message).toMatch(/^item 1: arguments do not match the inputSchema of faulty.echo: `text` must be string/);
    });
  });
});
