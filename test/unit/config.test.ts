import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, problemsOf } from '../helpers/config-dir.js';
import { loadHistorySettings } from '../../src/config/history-settings.js';
import { loadConfig } from '../../src/config/load.js';

const makeDir = (files?: Record<string, string>) => makeConfigDir(files, 'runner-config-');
const configProblemsOf = (promise: Promise<unknown>) => problemsOf(promise, 'config');

describe('loadConfig: discovery and defaults', () => {
  it('uses the defaults, with the working folder as config folder, when no file exists', async () => {
    const dir = await makeDir();
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config).toEqual({
      file: null,
      dir,
      artifacts: join(dir, 'artifacts'),
      concurrency: 8,
      apps: {},
      retry: { attempts: 1, delayMs: 1000, backoff: 2, maxDelayMs: 30_000, on: ['transport', 'timeout', 'protocol'], unsafe: false },
      policy: { readOnly: 'allow', destructive: 'ask', other: 'allow', openWorld: 'allow', headlessAsk: 'deny', approvalTimeoutMs: 86_400_000, rules: [] },
      secrets: [],
      secretValues: [],
      secretEntries: [],
      retention: {},
      warnings: [],
    });
  });

  it('finds the nearest runner.config.yaml up the tree and resolves paths against its folder', async () => {
    const dir = await makeDir({
      'runner.config.yaml': 'artifacts: out\napps:\n  image: { command: node, args: [server.js], cwd: apps/image, roots: [shared, /abs] }\n',
      'deep/er/.keep': '',
    });
    const config = await loadConfig({ cwd: join(dir, 'deep', 'er'), env: {} });
    expect(config.file).toBe(join(dir, 'runner.config.yaml'));
    expect(config.dir).toBe(dir);
    expect(config.artifacts).toBe(join(dir, 'out'));
    expect(config.apps.image).toMatchObject({
      transport: 'stdio',
      command: 'node',
      args: ['server.js'],
      cwd: join(dir, 'apps', 'image'),
      roots: [join(dir, 'shared'), '/abs'],
    });
  });

  it('prefers --config over discovery and fails when that file does not exist', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'concurrency: 2\n', 'other.yaml': 'concurrency: 3\n' });
    expect((await loadConfig({ cwd: dir, configPath: 'other.yaml', env: {} })).concurrency).toBe(3);
    await expect(loadConfig({ cwd: dir, configPath: 'missing.yaml', env: {} })).rejects.toMatchObject({ code: 'not-found' });
  });

  it('normalizes apps, durations, rates, retry and policy', async () => {
    const dir = await makeDir({
      'runner.config.yaml': [
        'apps:',
        '  image: { command: node, concurrency: 4, rate: 15/min, timeout: 60s, stop-timeout: 300ms }',
        '  notes: { url: "http://127.0.0.1:3001/mcp", roots: false }',
        'retry: { attempts: 3, delay: 500ms, max-delay: 10s, on: [tool, timeout] }',
        'policy: { read-only: allow, destructive: deny, open-world: ask, headless-ask: wait, approval-timeout: 90m, rules: [{ match: "image.*", action: allow }] }',
        '',
      ].join('\n'),
    });
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config.apps.image).toEqual({
      name: 'image',
      transport: 'stdio',
      command: 'node',
      args: [],
      env: {},
      cwd: dir,
      concurrency: 4,
      rate: { count: 15, intervalMs: 60_000 },
      timeoutMs: 60_000,
      stopTimeoutMs: 300,
      roots: [join(dir, 'artifacts')],
      location: { file: 'runner.config.yaml', line: 2, col: 3 },
    });
    expect(config.apps.notes).toMatchObject({ transport: 'http', url: 'http://127.0.0.1:3001/mcp', headers: {}, roots: false });
    expect(config.retry).toEqual({ attempts: 3, delayMs: 500, backoff: 2, maxDelayMs: 10_000, on: ['tool', 'timeout'], unsafe: false });
    expect(config.policy).toEqual({
      readOnly: 'allow',
      destructive: 'deny',
      other: 'allow',
      openWorld: 'ask',
      headlessAsk: 'wait',
      approvalTimeoutMs: 90 * 60_000,
      rules: [{ match: 'image.*', action: 'allow' }],
    });
  });
});

describe('loadConfig: problems point at file:line:col', () => {
  it('names an unknown key, where it is, and the key that was meant', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'apps:\n  image:\n    command: node\n    argz: [a]\n' });
    expect(await configProblemsOf(loadConfig({ cwd: dir, env: {} }))).toEqual([
      'runner.config.yaml:4:5: unknown key `argz` in app `image`\n' +
        '  hint: did you mean `args`? allowed keys: command, args, env, cwd, url, headers, auth, concurrency, rate, timeout, connect-timeout, max-result and 5 more',
    ]);
  });

  it('says what a duration, a rate and a count look like', async () => {
    const dir = await makeDir({
      'runner.config.yaml': 'concurrency: 0\napps:\n  image:\n    command: node\n    timeout: 5 minutes\n    rate: 15 per minute\n',
    });
    expect(await configProblemsOf(loadConfig({ cwd: dir, env: {} }))).toEqual([
      'runner.config.yaml:1:14: `concurrency`: expected an integer from 1 and up, got `0`',
      'runner.config.yaml:5:14: `timeout` of app `image`: expected a duration like 500ms, 30s or 10m, got `5 minutes`',
      'runner.config.yaml:6:11: `rate` of app `image`: expected a rate like 15/min, 2/s or 100/h, got `15 per minute`',
    ]);
  });

  it('requires exactly one of command and url, and rejects bad app names', async () => {
    const dir = await makeDir({
      'runner.config.yaml': 'apps:\n  both: { command: node, url: "http://x" }\n  none: { args: [a] }\n  "my app": { command: node }\n',
    });
    expect(await configProblemsOf(loadConfig({ cwd: dir, env: {} }))).toEqual([
      'runner.config.yaml:2:3: app `both`: expected exactly one of `command` (a stdio app) or `url` (a Streamable HTTP app), got both',
      'runner.config.yaml:3:3: app `none`: expected exactly one of `command` (a stdio app) or `url` (a Streamable HTTP app), got a mapping',
      'runner.config.yaml:4:3: invalid name `my app` in `apps`: expected an app name of letters, digits, `_` and `-`',
    ]);
  });

  it('reports a YAML syntax error with its position', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'apps:\n  image: { command: node\nconcurrency: 2\n' });
    const problems = await configProblemsOf(loadConfig({ cwd: dir, env: {} }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^runner\.config\.yaml:3:1: YAML syntax error: /);
  });

  it('stops nested aliases that expand past 100,000 nodes at the alias, also when only history settings are read', async () => {
    const levels = ['      l0: &l0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++) levels.push(`      l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(', ')}]`);
    const dir = await makeDir({ 'runner.config.yaml': ['apps:', '  image:', '    command: node', '    env:', ...levels, ''].join('\n') });
    const expected = [
      'runner.config.yaml:10:16: YAML aliases expand to more than 100,000 nodes (limit for runner files)\n' +
        '  hint: each `*alias` counts as a copy of what its anchor holds, and aliases inside anchors multiply: write the repeated values out, or alias fewer levels deep',
    ];
    expect(await configProblemsOf(loadConfig({ cwd: dir, env: {} }))).toEqual(expected);
    expect(await configProblemsOf(loadHistorySettings({ cwd: dir, env: {} }))).toEqual(expected);
  });

  it('reads anchors and aliases as if the values were written out', async () => {
    const dir = await makeDir({
      'runner.config.yaml': 'apps:\n  image: &app { command: node, args: [server.js], timeout: 30s }\n  sheet: *app\nretention: &keep { max-runs: 5 }\n',
    });
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config.apps.sheet).toMatchObject({ command: 'node', args: ['server.js'], timeoutMs: 30_000 });
    expect({ ...config.apps.sheet, name: 'image' }).toEqual({ ...config.apps.image, location: config.apps.sheet!.location });
    expect((await loadHistorySettings({ cwd: dir, env: {} })).retention).toEqual({ maxRuns: 5 });
  });

  it('refuses a file over 4MiB before parsing it, naming its size', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'concurrency: 2\n# '.padEnd(4 * 1024 ** 2 + 1, 'x') });
    const expected = [
      'file `runner.config.yaml` is too large: 4,194,305 bytes, over the limit of 4MiB for config and workflow files\n' +
        '  hint: a 10,000-step workflow is about 1MiB: check that this is the file you meant',
    ];
    expect(await configProblemsOf(loadConfig({ cwd: dir, env: {} }))).toEqual(expected);
    expect(await configProblemsOf(loadHistorySettings({ cwd: dir, env: {} }))).toEqual(expected);
  });

  it('rejects stdio-only keys on an http app', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'apps:\n  notes:\n    url: http://127.0.0.1/mcp\n    args: [a]\n    stop-timeout: 1s\n' });
    expect(await configProblemsOf(loadConfig({ cwd: dir, env: {} }))).toEqual([
      'runner.config.yaml:4:5: `args` applies only to stdio apps (with `command`), and app `notes` is not one',
      'runner.config.yaml:5:5: `stop-timeout` applies only to stdio apps (with `command`), and app `notes` is not one',
    ]);
  });
});

describe('loadConfig: ${VAR} expansion and secrets', () => {
  const text = [
    'apps:',
    '  image:',
    '    command: node',
    '    args: ["--token=${TOKEN}", "$HOME", "${MISSING:-fallback}"]',
    '    env: { API_KEY: "${TOKEN}", LEVEL: warn, LITERAL_SECRET: hunter2 }',
    '  notes:',
    '    url: http://${HOST}/mcp',
    '    headers: { Authorization: "Bearer ${NOTES_TOKEN}" }',
    'secrets: [NOTES_TOKEN, TOKEN, LITERAL_SECRET, UNSET_SECRET]',
    '',
  ].join('\n');

  it('expands ${VAR} in args, env, url and headers from the given environment', async () => {
    const dir = await makeDir({ 'runner.config.yaml': text });
    const env = { TOKEN: 'tok', HOST: 'example.test:3001', NOTES_TOKEN: 'notes-secret-value', HOME: '/home/x' };
    const config = await loadConfig({ cwd: dir, env });
    expect(config.apps.image).toMatchObject({
      args: ['--token=tok', '$HOME', 'fallback'],
      env: { API_KEY: 'tok', LEVEL: 'warn', LITERAL_SECRET: 'hunter2' },
    });
    expect(config.apps.notes).toMatchObject({
      url: 'http://example.test:3001/mcp',
      headers: { Authorization: 'Bearer notes-secret-value' },
    });
    expect(config.secrets).toEqual(['NOTES_TOKEN', 'TOKEN', 'LITERAL_SECRET', 'UNSET_SECRET']);
    expect(config.secretValues).toEqual(['notes-secret-value', 'hunter2', 'tok']);
  });

  it('reports each unset variable where it is used', async () => {
    const dir = await makeDir({ 'runner.config.yaml': text });
    expect(await configProblemsOf(loadConfig({ cwd: dir, env: { TOKEN: 'tok', HOST: 'h' } }))).toEqual([
      'runner.config.yaml:8:39: environment variable `NOTES_TOKEN` is not set (used in `headers.Authorization` of app `notes`)\n' +
        '  hint: set NOTES_TOKEN in the environment, or give a default: ${NOTES_TOKEN:-value}',
    ]);
  });
});

describe('loadConfig: import of mcpServers files', () => {
  const mcpJson = JSON.stringify(
    {
      mcpServers: {
        image: { command: 'npx', args: ['imported'] },
        files: { command: 'npx', args: ['-y', 'server-filesystem'], env: { ROOT: '${ROOT_DIR}' }, disabled: false, autoApprove: [] },
        remote: { type: 'http', url: 'https://example.test/mcp', headers: { 'X-Key': 'k' } },
      },
      otherToolSetting: true,
    },
    null,
    2,
  );

  it('reads apps from .mcp.json, ignoring keys other tools use; apps in the config win', async () => {
    const dir = await makeDir({
      'runner.config.yaml': 'import: [.mcp.json]\napps:\n  image: { command: node, args: [mine.js] }\n',
      '.mcp.json': mcpJson,
    });
    const config = await loadConfig({ cwd: dir, env: { ROOT_DIR: '/data' } });
    expect(Object.keys(config.apps).sort()).toEqual(['files', 'image', 'remote']);
    expect(config.apps.image).toMatchObject({ command: 'node', args: ['mine.js'] });
    expect(config.apps.files).toEqual({
      name: 'files',
      transport: 'stdio',
      command: 'npx',
      args: ['-y', 'server-filesystem'],
      env: { ROOT: '/data' },
      cwd: dir,
      roots: [join(dir, 'artifacts')],
      location: { file: '.mcp.json', line: 9, col: 5 },
    });
    expect(config.apps.remote).toMatchObject({ transport: 'http', url: 'https://example.test/mcp', headers: { 'X-Key': 'k' } });
  });

  it('reports a JSON syntax error in an imported file with its position (comments and trailing commas are fine)', async () => {
    const dir = await makeDir({
      'runner.config.yaml': 'import: [.mcp.json]\n',
      '.mcp.json': '{\n  // mine\n  "mcpServers": {\n    "a": { "command": "x", },\n    "b": { "command" "y" }\n  }\n}\n',
    });
    expect(await configProblemsOf(loadConfig({ cwd: dir, env: {} }))).toEqual([".mcp.json:5:22: JSON syntax error: Expected ':' after property name"]);
  });

  it('reports a missing import file at its entry (a bad server is only a warning: see config-import.test.ts)', async () => {
    const dir = await makeDir({
      'runner.config.yaml': 'import:\n  - missing.json\n  - .mcp.json\n',
      '.mcp.json': '{ "mcpServers": { "old": { "type": "sse", "url": "http://x" }, "bad": { "args": [] } } }',
    });
    expect(await configProblemsOf(loadConfig({ cwd: dir, env: {} }))).toEqual([
      `runner.config.yaml:2:5: cannot read import \`missing.json\`: no such file\n  hint: paths in \`import\` are relative to the config folder (${dir})`,
    ]);
  });
});

describe('loadConfig: a timeout of zero', () => {
  it("is a warning at the app's key (nothing can finish within it), and the config loads", async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'apps:\n  a:\n    command: node\n    timeout: 0s\n    connect-timeout: 0ms\n  b:\n    command: node\n    timeout: 5s\n' });
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config.apps.a).toMatchObject({ timeoutMs: 0, connectTimeoutMs: 0 });
    expect(config.warnings.map((warning) => `${warning.location?.line}:${warning.location?.col} ${warning.message}`)).toEqual([
      '4:14 `timeout` of app `a` is `0s`: nothing can finish within it, so it runs out at once',
      '5:22 `connect-timeout` of app `a` is `0ms`: nothing can finish within it, so it runs out at once',
    ]);
  });
});
