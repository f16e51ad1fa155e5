import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STARTER_SERVER_PACKAGE } from '../../src/cli/commands/init.js';
import { startServe } from '../helpers/serve.js';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, everythingApp, repoRoot, faultyArgs } from '../helpers/workspace.js';

// A new user's first minutes: `runner init`, a .env file, `-i key=@file.json`,
// and watch paths in the home folder, through the CLI.

const emptyFolder = () => mkdtempSync(join(tmpdir(), 'runner-init-'));

describe('runner init', () => {
  it('writes a config and a workflow that validate, and says what to run next', async () => {
    const dir = emptyFolder();
    const result = await runInProcess(['init'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('wrote runner.config.yaml\nwrote workflows/hello.yaml\n');
    expect(result.stdout).toContain('runner run workflows/hello.yaml');
    const validate = await runInProcess(['validate', 'workflows/hello.yaml'], { cwd: dir });
    expect(validate.stderr).toBe('');
    expect(validate.code).toBe(0);
  });

  it('starts a workflow that runs against the server it names', async () => {
    const dir = emptyFolder();
    expect((await runInProcess(['init'], { cwd: dir })).code).toBe(0);
    // The same server the config starts through npx, launched from this checkout: no download in tests.
    const config = join(dir, 'runner.config.yaml');
    const text = readFileSync(config, 'utf8');
    const npx = `command: npx\n    args: ["-y", "${STARTER_SERVER_PACKAGE}", "stdio"]`;
    expect(text).toContain(npx);
    writeFileSync(config, text.replace(npx, `command: node\n    args: [${JSON.stringify(everythingApp)}, "stdio"]`));
    const run = await runInProcess(['run', 'workflows/hello.yaml', '-i', 'name=Ada', '--json'], { cwd: dir });
    expect(run.stderr).not.toMatch(/error/);
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(readFileSync(join(record.dir, 'save', 'greeting.txt'), 'utf8')).toBe('Echo: Hello, Ada!');
  });

  it('pins the starter server to the version this repository tests with', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    expect(STARTER_SERVER_PACKAGE).toBe(`@modelcontextprotocol/server-everything@${pkg.devDependencies['@modelcontextprotocol/server-everything']}`);
  });

  it('never overwrites: when either file exists it writes nothing and exits 2 naming it', async () => {
    const dir = emptyFolder();
    writeFileSync(join(dir, 'runner.config.yaml'), 'apps: {}\n');
    const config = await runInProcess(['init'], { cwd: dir });
    expect(config.code).toBe(2);
    expect(config.stderr).toContain('runner.config.yaml already exists');
    expect(readFileSync(join(dir, 'runner.config.yaml'), 'utf8')).toBe('apps: {}\n');
    expect(existsSync(join(dir, 'workflows'))).toBe(false);

    const other = emptyFolder();
    mkdirSync(join(other, 'workflows'));
    writeFileSync(join(other, 'workflows', 'hello.yaml'), 'mine\n');
    const workflow = await runInProcess(['init'], { cwd: other });
    expect(workflow.code).toBe(2);
    expect(workflow.stderr).toContain('workflows/hello.yaml already exists');
    expect(readdirSync(other)).toEqual(['workflows']);
    expect(readFileSync(join(other, 'workflows', 'hello.yaml'), 'utf8')).toBe('mine\n');
  });
});

describe('.env beside the config', () => {
  it('fills ${VAR} in the config; the real environment wins', async () => {
    const ws = createWorkspace(`apps:\n  faulty:\n    command: node\n    args: [${faultyArgs.map((arg) => JSON.stringify(arg)).join(', ')}, --name, "\${SERVER_NAME}"]\n`);
    ws.write('.env', 'SERVER_NAME=from-dotenv\n');
    const fromFile = await runInProcess(['tools', 'faulty'], { cwd: ws.dir });
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toMatch(/^faulty \(from-dotenv 1\.0\.0,/);
    const real = await runInProcess(['tools', 'faulty'], { cwd: ws.dir, env: { SERVER_NAME: 'from-env' } });
    expect(real.stdout).toMatch(/^faulty \(from-env 1\.0\.0,/);
  });
});

describe('-i key=@file.json', () => {
  const workspace = () => {
    const ws = createWorkspace(`apps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(faultyArgs)}\n`);
    ws.write('wf.yaml', 'name: wf\ninputs:\n  rows: { type: array }\nsteps:\n  - id: show\n    uses: faulty.echo\n    with: { text: "${{ toJSON(inputs.rows) }}" }\n');
    return ws;
  };

  it('reads the input from a JSON file relative to the current folder', async () => {
    const ws = workspace();
    ws.write('data/rows.json', '[["tea", 3], ["milk", 1.5]]');
    const result = await runInProcess(['run', 'wf.yaml', '-i', 'rows=@data/rows.json', '--json'], { cwd: ws.dir });
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record.inputs).toEqual({ rows: [['tea', 3], ['milk', 1.5]] });
    expect(JSON.parse(record.steps[0].text)).toEqual([['tea', 3], ['milk', 1.5]]);
  });

  it('exits 2 naming a missing or invalid file, before anything runs', async () => {
    const ws = workspace();
    const missing = await runInProcess(['run', 'wf.yaml', '-i', 'rows=@rows.json'], { cwd: ws.dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('`-i rows=@rows.json`: cannot read `rows.json`: no such file');
    ws.write('rows.json', '[1, 2,]');
    const invalid = await runInProcess(['run', 'wf.yaml', '-i', 'rows=@rows.json'], { cwd: ws.dir });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/rows\.json:1:8: JSON syntax error/);
    expect(existsSync(join(ws.artifacts, 'wf'))).toBe(false);
  });
});

describe('watch paths in the home folder', () => {
  it('expand ~ to an absolute path that serve logs; a missing folder there is reported and not created', async () => {
    const ws = createWorkspace('');
    const folder = `drop-${Date.now()}`;
    ws.write('workflows/drop.yaml', `name: drop\non:\n  watch: { paths: ["~/${folder}/*.txt"] }\nsteps:\n  - { id: save, uses: runner.save, with: { name: a.txt, content: x } }\n`);
    const serve = startServe(ws, ['serve']);
    await serve.until((events) => events.some((event) => event.type === 'ready'), 'ready');
    const warnings = serve.events.filter((event) => event.type === 'warning').map((event) => event.message);
    const watched = `${process.env.HOME}/${folder}`; // what the spawned serve inherits (os.homedir() in a worker thread is the process's)
    expect(warnings).toEqual(
      expect.arrayContaining([
        `watching ${watched}/*.txt, outside the project (written as an absolute path)`,
        expect.stringContaining(`watch folder ${watched} (watch paths: ${watched}/*.txt) does not exist; it is outside the project, so it is not created`),
      ]),
    );
    expect(existsSync(watched)).toBe(false);
    expect(await serve.stop('SIGTERM')).toBe(0);
  });

  it('refuse other variables at validate time, with a hint', async () => {
    const ws = createWorkspace('');
    ws.write('wf.yaml', 'name: wf\non:\n  watch: { paths: ["$DATA/inbox/*.txt"] }\nsteps:\n  - { id: save, uses: runner.save, with: { name: a.txt, content: x } }\n');
    const result = await runInProcess(['validate', 'wf.yaml'], { cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/wf\.yaml:3:20: watch path `\$DATA\/inbox\/\*\.txt` uses `\$DATA`, which is not expanded/);
    expect(result.stderr).toContain('only `~`, `$HOME` and `${HOME}` at the start of a watch path expand');
  });
});
