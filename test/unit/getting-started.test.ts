import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/load.js';
import { formatDiagnostic, RunnerError } from '../../src/errors.js';
import { watchFiles } from '../../src/triggers/watch.js';
import { readValueFiles, resolveInputs } from '../../src/workflow/inputs.js';
import { parseWorkflowText } from '../../src/workflow/load.js';

async function makeDir(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'runner-start-'));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

async function problemsOf(promise: Promise<unknown>, code: string): Promise<string[]> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof RunnerError)) throw new Error(`expected a RunnerError, got ${String(error)}`);
  expect(error.code).toBe(code);
  return error.diagnostics.length > 0 ? error.diagnostics.map(formatDiagnostic) : [error.message];
}

describe('.env beside the config', () => {
  const files = {
    'runner.config.yaml': 'apps:\n  notes:\n    url: ${NOTES_URL}\n    headers: { Authorization: "Bearer ${NOTES_TOKEN}" }\nsecrets: [NOTES_TOKEN]\n',
    '.env': '# local settings\nNOTES_URL=http://127.0.0.1:3001/mcp\nNOTES_TOKEN="from-dotenv"\n',
  };

  it('fills ${VAR} and secrets from .env, never touching process.env', async () => {
    const dir = await makeDir(files);
    const config = await loadConfig({ cwd: join(dir), env: {} });
    expect(config.apps.notes).toMatchObject({ url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer from-dotenv' } });
    expect(config.secretValues).toContain('from-dotenv');
    expect(process.env.NOTES_TOKEN).toBeUndefined();
  });

  it('lets the real environment win, and reads the .env of the config folder, not of the working folder', async () => {
    const dir = await makeDir({ ...files, 'sub/.env': 'NOTES_URL=http://wrong/mcp\n' });
    const config = await loadConfig({ cwd: join(dir, 'sub'), env: { NOTES_TOKEN: 'real' } });
    expect(config.apps.notes).toMatchObject({ url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer real' } });
  });
});

describe('the app name `runner` belongs to the built-in tools', () => {
  it('is an error at its key in runner.config.yaml', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'apps:\n  image: { command: node }\n  runner: { command: node }\n' });
    expect(await problemsOf(loadConfig({ cwd: dir, env: {} }), 'config')).toEqual([
      expect.stringMatching(/^runner\.config\.yaml:3:3: app name `runner` is reserved for runner's built-in tools \(runner\.transform, runner\.save\)\n  hint: /),
    ]);
  });

  it('is skipped with a warning in an imported file, and the other servers still load', async () => {
    const dir = await makeDir({
      'runner.config.yaml': 'import: [.mcp.json]\n',
      '.mcp.json': '{\n  "mcpServers": {\n    "runner": { "command": "x" },\n    "notes": { "command": "node" }\n  }\n}\n',
    });
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(Object.keys(config.apps)).toEqual(['notes']);
    expect(config.warnings.map(formatDiagnostic)).toEqual([expect.stringMatching(/^\.mcp\.json:3:5: server `runner` is not imported/)]);
  });
});

describe('-i name=@file.json', () => {
  const workflow = (dir: string) =>
    parseWorkflowText(
      'name: wf\ninputs:\n  rows: { type: array }\n  handle: { type: string, required: false }\nsteps:\n  - { id: a, uses: image.info }\n',
      'wf.yaml',
      { dir, apps: { image: { name: 'image', transport: 'stdio', command: 'node', args: [], env: {}, cwd: dir, roots: false } } } as never,
    );

  it('reads the value as JSON relative to the working folder; @@ is a literal @', async () => {
    const dir = await makeDir({ 'data/rows.json': '[[1, "a"], [2, "b"]]' });
    const pairs = await readValueFiles(['rows=@data/rows.json', 'handle=@@octocat'], dir, '-i ');
    expect(resolveInputs(workflow(dir), {}, { cliPairs: pairs })).toEqual({ rows: [[1, 'a'], [2, 'b']], handle: '@octocat' });
  });

  it('names a missing file, a file that is not JSON, one over 4 MiB, and a value of the wrong type', async () => {
    const dir = await makeDir({ 'bad.json': '{\n  "a": 1,\n}\n', 'object.json': '{"a": 1}' });
    await writeFile(join(dir, 'big.json'), `"${'x'.repeat(4 * 1024 ** 2)}"`);
    expect(await problemsOf(readValueFiles(['rows=@nope.json'], dir, '-i '), 'inputs')).toEqual(['`-i rows=@nope.json`: cannot read `nope.json`: no such file']);
    expect(await problemsOf(readValueFiles(['rows=@bad.json'], dir, '-i '), 'inputs')).toEqual([
      'bad.json:3:1: JSON syntax error: Expected double-quoted property name\n  hint: `-i rows=@bad.json` reads one JSON value from the file (a text is a JSON string, in double quotes)',
    ]);
    expect((await problemsOf(readValueFiles(['rows=@big.json'], dir, '-i '), 'inputs'))[0]).toMatch(/^file `big\.json` is too large: 4,194,306 bytes, over the limit of 4MiB/);
    const pairs = await readValueFiles(['rows=@object.json'], dir, '-i ');
    expect(await problemsOf(Promise.resolve().then(() => resolveInputs(workflow(dir), {}, { cliPairs: pairs })), 'inputs')).toEqual([
      '`-i rows=@object.json`: expected a JSON array, got `{"a":1}`',
    ]);
  });
});

describe('watch paths', () => {
  const watchPaths = async (...paths: string[]) => {
    const dir = await makeDir();
    const text = `name: wf\non:\n  watch: { paths: ${JSON.stringify(paths)} }\nsteps:\n  - { id: a, uses: image.info }\n`;
    return parseWorkflowText(text, 'wf.yaml', { dir, apps: { image: {} } } as never).on.watch!.paths;
  };

  it('expand ~, $HOME and ${HOME} at the start to the home folder', async () => {
    expect(await watchPaths('~/inbox/*.pdf', '$HOME/scans/*.png', '${HOME}/x/**', 'artifacts/inbox/*')).toEqual([
      `${homedir()}/inbox/*.pdf`,
      `${homedir()}/scans/*.png`,
      `${homedir()}/x/**`,
      'artifacts/inbox/*',
    ]);
  });

  it('refuse any other variable, and ~user, with a hint', async () => {
    const error = await watchPaths('$DATA/in/*.csv', 'in/${DAY}/*', '~bob/in/*', '$HOMEDIR/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunnerError);
    const problems = (error as RunnerError).diagnostics;
    expect(problems.map((d) => d.message)).toEqual([
      'watch path `$DATA/in/*.csv` uses `$DATA`, which is not expanded',
      'watch path `in/${DAY}/*` uses `${DAY}`, which is not expanded',
      'watch path `~bob/in/*` uses `~bob`, which is not expanded',
      'watch path `$HOMEDIR/x` uses `$HOMEDIR`, which is not expanded',
    ]);
    expect(problems[0]!.hint).toContain('only `~`, `$HOME` and `${HOME}` at the start');
  });
});

describe('a watched folder that does not exist', () => {
  const start = async (configDir: string, paths: string[], artifacts = join(configDir, 'artifacts')) => {
    const warnings: string[] = [];
    const files: string[] = [];
    const watch = await watchFiles({
      trigger: { paths, events: ['add'], debounceMs: 20 },
      configDir,
      artifacts,
      initial: false,
      clock: systemClock,
      pollMs: 20,
      stableChecks: 1,
      onFile: (file) => files.push(file.path),
      onError: (message) => warnings.push(message),
    });
    return { watch, warnings, files };
  };

  it('inside the project is created, and reported', async () => {
    const dir = await makeDir();
    const { watch, warnings } = await start(dir, ['artifacts/inbox/*.png']);
    await watch.close();
    expect(existsSync(join(dir, 'artifacts', 'inbox'))).toBe(true);
    expect(warnings).toEqual([`watch folder ${join('artifacts', 'inbox')} did not exist, so it was created`]);
  });

  it('outside the project is reported and never created; a file there triggers once it exists', async () => {
    const project = await makeDir();
    const outside = await makeDir();
    const folder = join(outside, 'drop', 'inbox');
    const { watch, warnings, files } = await start(project, [`${folder}/*.txt`]);
    try {
      expect(existsSync(join(outside, 'drop'))).toBe(false);
      expect(warnings).toEqual([expect.stringContaining(`watch folder ${folder} (watch paths: ${folder}/*.txt) does not exist; it is outside the project, so it is not created`)]);
      await mkdir(folder, { recursive: true });
      await writeFile(join(folder, 'a.txt'), 'a');
      await writeFile(join(outside, 'b.txt'), 'not watched');
      for (let i = 0; i < 100 && files.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(files).toEqual([join(folder, 'a.txt')]);
    } finally {
      await watch.close();
    }
  });
});
