import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, imageAppArgs, type Workspace, faultyArgs } from '../helpers/workspace.js';

// `runner tools` (listing, one tool in detail, the built-ins) and `runner call`
// (one tool call as a recorded run), through the CLI.

const faultyYaml = (name = 'faulty') => `  ${name}:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n`;
// Nothing listens on port 1: the connection is refused at once.
const downYaml = '  quote-http:\n    url: http://127.0.0.1:1/mcp\n';

const cli = (ws: Workspace, ...args: string[]) => runInProcess(['--config', ws.config, ...args], { cwd: ws.dir });

// Each test has its own workspace and processes, and part of each is waiting on them: they run at once.
describe.concurrent('tool discovery', () => {
  describe('runner tools: listing', () => {
    it('says which app is unavailable and exits 0 when another answered; the built-in tools come last', async ({ expect }) => {
      const ws = createWorkspace(`apps:\n${faultyYaml()}${downYaml}`);
      const result = await cli(ws, 'tools');
      expect(result.code).toBe(0);
      const lines = result.stdout.split('\n');
      expect(lines.find((line) => line.startsWith('quote-http: unavailable: '))).toMatch(/is the server running\?/);
      expect(result.stdout).toMatch(/faulty\.echo\s+allow\s+read-only/);
      const builtins = lines.indexOf('runner (built-in)');
      expect(builtins).toBeGreaterThan(lines.findIndex((line) => line.startsWith('faulty (')));
      expect(lines.slice(builtins + 1, builtins + 3)).toEqual([
        expect.stringMatching(/^ {2}runner\.transform\s+allow\s+read-only\s+\(built-in\)$/),
        expect.stringMatching(/^ {2}runner\.save\s+allow\s+read-only\s+\(built-in\)$/),
      ]);
    });

    it('exits 1 when no app answered, and when the one app asked for is unavailable', async ({ expect }) => {
      const ws = createWorkspace(`apps:\n${faultyYaml()}${downYaml}`);
      const app = await cli(ws, 'tools', 'quote-http');
      expect(app.code).toBe(1);
      expect(app.stdout).toMatch(/^quote-http: unavailable: /);
      const onlyDown = createWorkspace(`apps:\n${downYaml}`);
      const all = await cli(onlyDown, 'tools');
      expect(all.code).toBe(1);
      expect(all.stdout).toContain('runner (built-in)');
    });

    it('--json gives every tool its inputSchema and outputSchema; the built-ins are allowed as built-in', async ({ expect }) => {
      const ws = createWorkspace(`apps:\n${faultyYaml()}`);
      const result = await cli(ws, 'tools', '--json');
      expect(result.code).toBe(0);
      const listing = JSON.parse(result.stdout);
      expect(listing.map((entry: { app: string }) => entry.app)).toEqual(['faulty', 'runner']);
      const echo = listing[0].tools.find((tool: { name: string }) => tool.name === 'echo');
      expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
      expect(echo.outputSchema).toBeNull();
      const save = listing[1].tools.find((tool: { name: string }) => tool.name === 'save');
      expect(save).toMatchObject({ policy: { action: 'allow', reason: 'built-in' }, outputSchema: { required: ['path', 'bytes'] } });
    });

    it('lists the built-in tools without connecting to any app', async ({ expect }) => {
      const ws = createWorkspace(`apps:\n${downYaml}`);
      const result = await cli(ws, 'tools', 'runner');
      expect(result.code).toBe(0);
      expect(result.stdout).not.toContain('quote-http');
      expect(result.stdout).toMatch(/runner\.transform\s+allow/);
    });

    it('answers an unknown app or tool with "did you mean", exit 2', async ({ expect }) => {
      const ws = createWorkspace(`apps:\n${faultyYaml()}`);
      const app = await cli(ws, 'tools', 'faulti');
      expect(app.code).toBe(2);
      expect(app.stderr).toContain('no app named `faulti`');
      expect(app.stderr).toContain('did you mean `faulty`?');
      const tool = await cli(ws, 'tools', 'faulty.ecko');
      expect(tool.code).toBe(2);
      expect(tool.stderr).toContain('app `faulty` has no tool `ecko`');
      expect(tool.stderr).toContain('did you mean `echo`?');
    });
  });

  describe('runner tools APP.TOOL', () => {
    it('prints the input and output schema readably and a with: block to paste', async ({ expect }) => {
      const ws = createWorkspace(`apps:\n  image:\n    command: node\n    args: ${JSON.stringify(imageAppArgs)}\n`);
      const result = await cli(ws, 'tools', 'image.resize');
      expect(result.code).toBe(0);
      const text = result.stdout;
      expect(text).toMatch(/^image\.resize/);
      expect(text).toMatch(/policy: allow \(other\)/);
      expect(text).toMatch(/\n {2}path\s+string\s+required\s+\S/);
      expect(text).toMatch(/\n {2}fit\s+string\s+optional\s+default "cover"\s+one of "cover", "contain", "fill", "inside", "outside"/);
      expect(text).toMatch(/output \(structuredContent\):\n {2}path\s+string\s+required/);
      const sample = text.slice(text.indexOf('sample step:') + 'sample step:'.length);
      const [step] = parse(sample) as [{ id: string; uses: string; with: Record<string, unknown> }];
      expect(step).toEqual({ id: 'resize', uses: 'image.resize', with: { path: '', width: 1 } });
      expect(sample).toMatch(/# fit: "cover"/);
    });

    it('--json prints the tool with its schemas', async ({ expect }) => {
      const ws = createWorkspace(`apps:\n${faultyYaml()}`);
      const result = await cli(ws, 'tools', 'faulty.big', '--json');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        app: 'faulty',
        name: 'big',
        policy: { action: 'allow', reason: 'read-only' },
        inputSchema: { required: ['bytes'] },
        outputSchema: null,
      });
    });
  });

  describe('runner call', () => {
    const callWorkspace = () => createWorkspace(`apps:\n${faultyYaml()}`);
    const callRuns = (ws: Workspace) => (existsSync(join(ws.artifacts, 'call')) ? readdirSync(join(ws.artifacts, 'call')) : []);

    it('prints the text of the result and records the call as a run of `call`', async ({ expect }) => {
      const ws = callWorkspace();
      const result = await cli(ws, 'call', 'faulty.echo', 'text=hello there');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('hello there\n');
      const [id] = callRuns(ws);
      const record = JSON.parse(readFileSync(join(ws.artifacts, 'call', id!, 'run.json'), 'utf8'));
      expect(record).toMatchObject({ workflow: 'call', status: 'succeeded', steps: [{ id: 'echo', uses: 'faulty.echo', args: { text: 'hello there' } }] });
      const runs = JSON.parse((await cli(ws, 'runs', '--json')).stdout);
      expect(runs.map((run: { id: string; workflow: string }) => [run.id, run.workflow])).toEqual([[id, 'call']]);
    });

    it('types arguments by the inputSchema, reads @file.json, and passes ${{ }} in a value as it is', async ({ expect }) => {
      const ws = callWorkspace();
      ws.write('message.json', '"from a file"');
      const fromFile = await cli(ws, 'call', 'faulty.echo', 'text=@message.json', 'delayMs=5', '--json');
      expect(fromFile.code).toBe(0);
      expect(JSON.parse(fromFile.stdout).steps[0].args).toEqual({ text: 'from a file', delayMs: 5 });
      const literal = await cli(ws, 'call', 'faulty.echo', 'text=${{ env.HOME }}');
      expect(literal.stdout).toBe('${{ env.HOME }}\n');
      const escaped = await cli(ws, 'call', 'faulty.echo', 'text=@@handle');
      expect(escaped.stdout).toBe('@handle\n');
    });

    it('exits 2 naming the argument that fails the inputSchema, and runs nothing', async ({ expect }) => {
      const ws = callWorkspace();
      const badType = await cli(ws, 'call', 'faulty.slow', 'ms=soon');
      expect(badType.code).toBe(2);
      expect(badType.stderr).toContain('argument `ms`: expected an integer, got `soon`');
      const missing = await cli(ws, 'call', 'faulty.slow');
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('missing required argument `ms`');
      const unknown = await cli(ws, 'call', 'faulty.echo', 'txt=x');
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('unknown argument `txt`');
      expect(unknown.stderr).toContain('did you mean `text`?');
      const noFile = await cli(ws, 'call', 'faulty.echo', 'text=@nope.json');
      expect(noFile.code).toBe(2);
      expect(noFile.stderr).toContain('`text=@nope.json`: cannot read `nope.json`: no such file');
      const noTool = await cli(ws, 'call', 'faulty.ecko');
      expect(noTool.code).toBe(2);
      expect(noTool.stderr).toContain('did you mean `echo`?');
      expect(callRuns(ws)).toEqual([]);
    });

    it('applies the policy like a run: an ask without a TTY is denied (exit 1) unless --yes or --allow', async ({ expect }) => {
      const ws = callWorkspace();
      const denied = await cli(ws, 'call', 'faulty.no_annotations');
      expect(denied.code).toBe(1);
      expect(denied.stderr).toMatch(/denied by policy/);
      expect(denied.stdout).toBe('');
      expect((await cli(ws, 'call', 'faulty.no_annotations', '--allow', 'faulty.no_*')).code).toBe(0);
      const allowed = await cli(ws, 'call', 'faulty.no_annotations', '--yes', '--json');
      expect(allowed.code).toBe(0);
      expect(JSON.parse(allowed.stdout).steps[0]).toMatchObject({ status: 'succeeded', text: 'no annotations' });
    });

    it('exits 1 when the tool fails, and calls the built-in tools too', async ({ expect }) => {
      const ws = callWorkspace();
      const failed = await cli(ws, 'call', 'faulty.fail', 'message=boom');
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain('boom');
      ws.write('rows.json', '[{"n": 1}, {"n": 2}]');
      const sum = await cli(ws, 'call', 'runner.transform', 'input=@rows.json', 'expression=$sum(n)');
      expect(sum.code).toBe(0);
      expect(sum.stdout).toBe('3\n');
    });
  });

  describe('a config may not name an app `runner`', () => {
    it('is exit 2 at the key', async ({ expect }) => {
      const ws = createWorkspace(`apps:\n${faultyYaml('runner')}`);
      const result = await cli(ws, 'tools');
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/runner\.config\.yaml:3:3: app name `runner` is reserved/);
    });
  });
});
