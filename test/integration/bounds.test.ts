import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, faultyArgs, repoRoot } from '../helpers/workspace.js';

const hostileDataApp = join(repoRoot, 'test', 'apps', 'hostile-data.js');

/** Runs `steps` against test/apps/hostile-data.js (as app `bt`), in process; the run record and how the step with `id` ended. */
async function runHostileData(steps: string) {
  const ws = createWorkspace('');
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  bt:\n    command: node\n    args: ${JSON.stringify([hostileDataApp])}\n`);
  const workflow = ws.write('wf.yaml', `name: wf\nsteps:\n${steps}`);
  const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir, apps: 'process' });
  const record = JSON.parse(result.stdout);
  return { result, record, step: (id: string) => record.steps.find((entry: { id: string }) => entry.id === id) };
}

// What a hostile app can drive stays bounded: the time the runner waits for
// an app that never answers its handshake, and the size of its log.

function workspace(appFlags: string[], appYaml = '') {
  const ws = createWorkspace('');
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify([...faultyArgs, ...appFlags])}\n${appYaml}`);
  const run = async (steps: string) => {
    const workflow = ws.write('wf.yaml', `name: wf\nsteps:\n${steps}`);
    // Bounds hold on the wire and in the app's process: the app starts as configured.
    const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir, apps: 'process' });
    return { ...result, record: JSON.parse(result.stdout) };
  };
  return { ws, run };
}

// Each test has its own workspace and processes, and part of each is waiting on them: they run at once.
describe.concurrent('bounds', () => {
  describe('waiting for an app', () => {
    it("is bounded by the app's connect-timeout: the app is unavailable, named with the limit", async ({ expect }) => {
      const { run } = workspace(['--never-answer'], '    connect-timeout: 500ms\n');
      const result = await run('  - id: a\n    uses: faulty.echo\n');
      expect(result.record.steps[0].error).toMatchObject({ kind: 'unavailable', outcome: 'not-sent' });
      expect(result.record.steps[0].error.message).toMatch(/failed to start/);
    });

    it("is bounded by the step's timeout too, which covers reaching the app: the step times out, nothing was sent", async ({ expect }) => {
      // connect-timeout stays at its 30 s default: only the step's timeout can end this wait in time.
      const { run } = workspace(['--never-answer']);
      const result = await run('  - id: a\n    uses: faulty.echo\n    timeout: 500ms\n');
      expect(result.record.steps[0].error).toMatchObject({ kind: 'timeout', outcome: 'not-sent' });
      expect(result.record.steps[0].error.message).toBe("faulty.echo was not sent: app `faulty` was not ready within the step's timeout of 500ms (timeout)");
    });
  });

  describe("a pattern in a tool's schema that backtracks (the app chose the regular expression)", () => {
    it('stops checking a result after 1 s: the step fails naming the limit; arguments it cannot check in time are sent for the app to judge', async ({ expect }) => {
      // Unchecked, each of the first two takes about a minute here (and doubles with each `a`), with nothing else running meanwhile.
      const evil = `${'a'.repeat(30)}!`;
      const { result, step } = await runHostileData(
        `  - id: output\n    uses: bt.evil_output\n    with: { n: 30 }\n    retry: { attempts: 3, delay: 10ms }\n  - id: input\n    uses: bt.evil_input\n    with: { s: "${evil}" }\n  - id: fine\n    uses: bt.fine_output\n`,
      );
      expect(result.code).toBe(1);
      expect(step('output')).toMatchObject({ status: 'failed', error: { kind: 'protocol' } });
      expect(step('output').error.message).toContain('stopped after 1000ms: a `pattern` in the schema backtracks');
      expect(step('output').attempts).toBe(1); // refused by a limit: not retried, though read-only and allowed 3 attempts
      expect(step('input')).toMatchObject({ status: 'succeeded', text: 'got 31 characters' });
      expect(step('fine')).toMatchObject({ status: 'succeeded', outputs: { s: 'abc' } });
    });
  });

  describe('how deep a result nests', () => {
    it('refuses a result nested deeper than 1,000 levels, naming the limit; the run goes on and is recorded, its report written', async ({ expect }) => {
      // 4,000 levels had overflowed the stack while the run was recorded: the run stopped as "could not be recorded".
      const { result, record, step } = await runHostileData(
        '  - id: deep\n    uses: bt.deep\n    with: { depth: 4000 }\n    retry: { attempts: 3, delay: 10ms }\n  - id: shallow\n    uses: bt.deep\n    with: { depth: 900 }\n  - id: after\n    uses: bt.fine_output\n    needs: [deep]\n    if: always()\n',
      );
      expect(result.code).toBe(1);
      expect(step('deep')).toMatchObject({ status: 'failed', error: { kind: 'protocol' } });
      expect(step('deep').error.message).toBe('the result from bt was refused: it nests deeper than 1000 levels (limit for data from apps)');
      expect(step('deep').attempts).toBe(1); // the same call would be refused again: not retried
      expect(step('shallow')).toMatchObject({ status: 'succeeded', text: '900 levels' });
      expect(step('after').status).toBe('succeeded');
      expect(record.status).toBe('failed');
      expect(result.stderr).not.toContain('could not be recorded');
      expect(existsSync(join(record.dir, 'report.html'))).toBe(true);
    });
  });

  describe('how many files a result has saved', () => {
    it('refuses a result with more than 1,000 payloads before writing any of them; fewer are saved, alike names made unique', async ({ expect }) => {
      // 1,001 blocks of 16 bytes each: a million fit in one message of the default max-result.
      const { record, step } = await runHostileData('  - id: many\n    uses: bt.many_images\n    with: { count: 1001 }\n    retry: { attempts: 3, delay: 10ms }\n  - id: few\n    uses: bt.many_images\n    with: { count: 3 }\n');
      expect(step('many')).toMatchObject({ status: 'failed', error: { kind: 'protocol' }, files: [] });
      expect(step('many').error.message).toBe(
        'the result was refused: it has 1001 files to save (images, audio, blobs, linked resources), and one result may have at most 1000',
      );
      expect(existsSync(join(record.dir, 'many'))).toBe(false); // not even the step's folder
      expect(step('many').attempts).toBe(1); // not retried
      expect(existsSync(join(record.dir, 'few', 'image-0.png'))).toBe(true);
      expect(step('few').status).toBe('succeeded');
      expect(step('few').files.map((file: string) => file.split('/').pop())).toEqual(['image-0.png', 'image-1.png', 'image-2.png']);
      expect(readFileSync(step('few').files[2], 'utf8')).toBe('not really a png');
    });
  });

  describe('the size of a result', () => {
    it('takes results past the 10 MB line cap of the SDK over stdio, up to max-result, and fails a larger one naming the limit', async ({ expect }) => {
      const { run } = workspace([], '    max-result: 16MiB\n');
      const result = await run(
        '  - id: large\n    uses: faulty.big\n    with: { bytes: 12000000 }\n' +
          '  - id: huge\n    uses: faulty.big\n    needs: [large]\n    with: { bytes: 20000000 }\n    retry: { attempts: 3, delay: 10ms }\n' +
          '  - id: after\n    uses: faulty.echo\n    needs: [huge]\n    if: always()\n    with: { text: still here }\n',
      );
      expect(result.record.steps.map((step: { status: string }) => step.status)).toEqual(['succeeded', 'failed', 'succeeded']);
      expect(result.record.steps[0].text).toHaveLength(12_000_000);
      expect(result.record.steps[1].error.kind).toBe('transport');
      expect(result.record.steps[1].error.message).toContain('larger than its max-result of 16MiB');
      expect(result.record.steps[1].attempts).toBe(1); // 20 MB would come again: not retried
      expect(result.record.steps[2].text).toBe('still here'); // the app was started again
    });
  });

  describe('an HTTP app whose response never ends', () => {
    it('is cut off at max-result, so memory stays bounded, and the app is unavailable naming the limit', async ({ expect }) => {
      let sent = 0;
      const server = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        let open = true;
        response.on('close', () => (open = false));
        const pour = () => {
          // Bounded, so the test ends even if the runner never stops reading.
          while (open && sent < 256 * 1024 * 1024) {
            sent += 64 * 1024;
            if (!response.write(Buffer.alloc(64 * 1024, 0x20))) return void response.once('drain', pour);
          }
          response.end();
        };
        pour();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const ws = createWorkspace(`apps:\n  endless:\n    url: http://127.0.0.1:${port}/mcp\n    max-result: 1MiB\n`);
        const workflow = ws.write('wf.yaml', 'name: wf\nsteps:\n  - id: a\n    uses: endless.anything\n');
        const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
        const step = JSON.parse(result.stdout).steps[0];
        expect(step.error).toMatchObject({ kind: 'unavailable' });
        expect(step.error.message).toContain('larger than its max-result of 1MiB');
        expect(sent).toBeLessThan(64 * 1024 * 1024); // the runner stopped reading long before the server's own bound
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  describe('what an app says it is (its name and version)', () => {
    it('keeps 200 characters of each, and what would steer a terminal reaches it escaped, as text and as JSON', async ({ expect }) => {
      const ws = createWorkspace('');
      // A million characters each, starting with ESC [2J (clear the screen) and the same as a C1 CSI.
      const app = `apps:\n  bt:\n    command: node\n    args: ${JSON.stringify([hostileDataApp])}\n    env: { HOSTILE_SERVER_INFO: "1000000" }\n`;
      ws.write('runner.config.yaml', `artifacts: artifacts\n${app}`);
      const workflow = ws.write('wf.yaml', 'name: wf\nsteps:\n  - id: a\n    uses: bt.fine_output\n');
      const cli = (args: string[]) => runInProcess(['--config', ws.config, ...args], { cwd: ws.dir, apps: 'process' });
      const [text, json, run, plan] = await Promise.all([cli(['tools', 'bt']), cli(['tools', 'bt', '--json']), cli(['run', workflow, '--json']), cli(['run', workflow, '--dry-run'])]);
      const kept = `\u001b[2J\u009b2Jhostile-data${'x'.repeat(200 - 19)}… (999,800 more characters)`;
      expect(JSON.parse(run.stdout).apps.bt.server.name).toBe(kept);
      expect(JSON.parse(json.stdout)[0].server.name).toBe(kept);
      for (const output of [text.stdout, json.stdout, run.stdout, plan.stdout]) {
        expect(output.length).toBeLessThan(20_000);
        // eslint-disable-next-line no-control-regex -- what must not reach the terminal
        expect(output).not.toMatch(/[\u001b\u009b]/);
      }
      expect(text.stdout).toContain('bt (\\u001b[2J\\u009b2Jhostile-dataxxx');
      expect(plan.stdout).toContain('app bt: \\u001b[2J\\u009b2Jhostile-dataxxx');
      expect(json.stdout).toContain('"name": "\\u001b[2J\\u009b2Jhostile-dataxxx');
    });
  });

  describe("an app's tool list in pages", () => {
    it('takes all its pages up to max-result together, and refuses a longer list naming the limit', async ({ expect }) => {
      const ws = createWorkspace('');
      // Each page (a tool with a 300,000-character description) is well under max-result; 3 together are too, 8 are not.
      const app = (pages: number) =>
        `    command: node\n    args: ${JSON.stringify([hostileDataApp])}\n    max-result: 1MiB\n    env: { HOSTILE_TOOL_PAGES: "${pages}", HOSTILE_TOOL_PAGE_CHARS: "300000" }\n`;
      ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  few:\n${app(3)}  many:\n${app(8)}`);
      const cli = (args: string[]) => runInProcess(['--config', ws.config, ...args], { cwd: ws.dir, apps: 'process' });
      const [few, many] = await Promise.all([cli(['tools', 'few', '--json']), cli(['tools', 'many', '--json'])]);
      expect(few.code).toBe(0);
      expect(JSON.parse(few.stdout)[0].tools.map((tool: { name: string }) => tool.name)).toEqual(expect.arrayContaining(['fine_output', 'pad_1', 'pad_2', 'pad_3']));
      expect(many.code).toBe(1);
      expect(JSON.parse(many.stdout)[0].error).toContain('its tool list is larger than its max-result of 1MiB (all its pages together)');
    });
  });

  describe('a foreach fed a huge list', () => {
    it('fails as input naming max-items before any call, and a step can raise its limit', async ({ expect }) => {
      const { ws } = workspace(['--counter', 'counter.txt']);
      const inputs = ws.write('inputs.json', JSON.stringify({ items: Array.from({ length: 100_000 }, (_, i) => i) }));
      const workflow = ws.write(
        'wf.yaml',
        'name: wf\ninputs:\n  items: { type: array }\nsteps:\n  - id: each\n    uses: faulty.work\n    foreach: ${{ inputs.items }}\n  - id: few\n    uses: faulty.echo\n    foreach: [1, 2, 3]\n    max-items: 3\n',
      );
      const result = await runInProcess(['--config', ws.config, 'run', workflow, '--inputs', inputs, '--json'], { cwd: ws.dir });
      const record = JSON.parse(result.stdout);
      expect(record.steps[0].error).toEqual({ kind: 'input', message: '`foreach` gave 100000 items, more than the limit of 10000 (step `max-items`)' });
      expect(record.steps[1].status).toBe('succeeded');
      expect(existsSync(join(ws.dir, 'counter.txt'))).toBe(false); // nothing was sent
    });
  });

  describe('what the record keeps of failed attempts', () => {
    it('keeps 16,000 characters of an error message and 100 attempts of a history: the first 50 and the latest 50', async ({ expect }) => {
      const { ws } = workspace([]);
      // 120 attempts, each a JSON-RPC error with a 100,000-character message: 12 MB of record before these bounds.
      const workflow = ws.write(
        'wf.yaml',
        'name: wf\nsteps:\n  - id: a\n    uses: faulty.rpc_error\n    with: { pad: 100000 }\n    retry: { attempts: 120, delay: 1ms, backoff: 1, on: [protocol] }\n',
      );
      const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
      const step = JSON.parse(result.stdout).steps[0];
      expect(step).toMatchObject({ status: 'failed', attempts: 120, error: { kind: 'protocol' } });
      expect(step.error.message).toMatch(/^faulty answered with JSON-RPC error -32603: faulty: rpc error -32603 x+… \(84,0\d\d more characters\)$/);
      expect(step.error.message.length).toBeLessThan(16_100);
      const attempts = step.history.map((entry: { attempt: number }) => entry.attempt);
      expect(attempts).toEqual([...Array.from({ length: 50 }, (_, i) => i + 1), ...Array.from({ length: 50 }, (_, i) => i + 71)]);
      expect(step.history.every((entry: { error: { message: string } }) => entry.error.message === step.error.message)).toBe(true);
      const record = JSON.parse(result.stdout);
      expect(statSync(join(record.dir, 'run.json')).size).toBeLessThan(2_000_000);
      expect(statSync(join(record.dir, 'report.html')).size).toBeLessThan(4_000_000);
    });
  });

  describe('what the record keeps of the questions a tool asks', () => {
    it('keeps 16,000 characters of each and 100 of them: the first 50 and the latest 50', async ({ expect }) => {
      const { ws } = workspace([]);
      // 150 questions at once, each of 50,000 characters: nobody can answer (no terminal), so each is declined.
      const workflow = ws.write('wf.yaml', 'name: wf\nsteps:\n  - id: a\n    uses: faulty.ask_many\n    with: { count: 150, pad: 50000 }\n');
      const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir });
      const step = JSON.parse(result.stdout).steps[0];
      expect(step.status).toBe('succeeded');
      expect(step.text).toBe(Array(150).fill('decline').join(' ')); // every question was answered
      const numbers = step.elicitations.map((asked: { message: string }) => Number(/^question (\d+) /.exec(asked.message)![1]));
      expect(numbers).toEqual([...Array.from({ length: 50 }, (_, i) => i + 1), ...Array.from({ length: 50 }, (_, i) => i + 101)]);
      expect(step.elicitations[0]).toMatchObject({ action: 'decline', source: 'none', answered: [] });
      expect(step.elicitations[0].message).toMatch(/^question 1 x+… \(34,0\d\d more characters\)$/);
    });
  });

  describe("an app's log", () => {
    it('keeps at most max-log of a stderr flood without newlines: its beginning, a marker and its end', async ({ expect }) => {
      const { run } = workspace(['--stderr-flood', String(8 * 1024 * 1024)], '    max-log: 1MiB\n');
      const result = await run('  - id: a\n    uses: faulty.slow\n    with: { ms: 1500 }\n');
      expect(result.code).toBe(0);
      const log = join(result.record.dir, 'logs', 'faulty.log');
      expect(statSync(log).size).toBeLessThanOrEqual(1024 * 1024 + 200);
      const text = readFileSync(log, 'utf8');
      expect(text.startsWith('#')).toBe(true);
      expect(text).toMatch(/\[runner: [\d.]+MiB of this app's stderr left out here \(max-log\); the last part follows\]/);
      expect(text.trimEnd().endsWith('faulty: flood done')).toBe(true);
    });
  });

  describe('an inputs file', () => {
    it('larger than 4MiB is refused before it is parsed, naming the file and the limit', async ({ expect }) => {
      const { ws } = workspace([]);
      const inputs = ws.write('inputs.json', JSON.stringify({ text: 'x'.repeat(5 * 1024 * 1024) }));
      const workflow = ws.write('wf.yaml', 'name: wf\ninputs:\n  text: { type: string }\nsteps:\n  - id: a\n    uses: faulty.echo\n    with: { text: "${{ inputs.text }}" }\n');
      const result = await runInProcess(['--config', ws.config, 'run', workflow, '--inputs', inputs], { cwd: ws.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('file `' + inputs + '` is too large: 5,242,891 bytes, over the limit of 4MiB for inputs files');
      expect(existsSync(join(ws.dir, 'artifacts'))).toBe(false); // no run was started
    });
  });
});
