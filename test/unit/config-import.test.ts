import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeConfigDir, problemsOf } from '../helpers/config-dir.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/client';
import { blankCommentsAndTrailingCommas } from '../../src/config/import-jsonc.js';
import { loadConfig } from '../../src/config/load.js';
import { PROTOCOL_CHOICES } from '../../src/config/schema.js';
import { formatDiagnostic } from '../../src/errors.js';
import { parseWorkflowText } from '../../src/workflow/load.js';

const makeDir = (files?: Record<string, string>) => makeConfigDir(files, 'runner-import-');

// Importing other clients' files as they really are: a server runner cannot
// use is a warning at load and an error only where a workflow uses it.

const claudeCode = JSON.stringify(
  {
    mcpServers: {
      files: { command: '${NODE_BIN:-node}', args: ['server.js', '--root=${DATA_DIR}'], env: { KEY: '${API_KEY}' } },
      remote: { type: 'http', url: 'https://${HOST}/mcp', headers: { Authorization: 'Bearer ${TOKEN:-none}' } },
      legacy: { type: 'sse', url: 'http://127.0.0.1:9/events' },
      guessed: { url: 'http://127.0.0.1:9/sse' },
      off: { command: 'nope', disabled: true },
      missing: { command: 'x', env: { SECRET: '${NOT_SET}' } },
      ws: { type: 'websocket', url: 'ws://127.0.0.1:9' },
      'my.server': { command: 'x' },
      runner: { command: 'x' },
    },
  },
  null,
  2,
);

const vsCode = `{
  // VS Code writes comments and trailing commas
  "inputs": [{ "type": "promptString", "id": "token", "password": true }],
  "servers": {
    "local": {
      "type": "stdio",
      "command": "node",
      "args": ["\${workspaceFolder}/server.js", "\${userHome}/data"],
      "env": { "LEVEL": "\${env:LEVEL}" },
    },
    "github": {
      "type": "http",
      "url": "https://api.example.test/mcp",
      "headers": { "Authorization": "Bearer \${input:token}" },
    },
  },
}
`;

describe('import: Claude Code .mcp.json', () => {
  it('expands ${VAR} and ${VAR:-default} in command, args, env, url and headers, and picks sse by type or by a /sse url', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'import: [.mcp.json]\n', '.mcp.json': claudeCode });
    const config = await loadConfig({ cwd: dir, env: { DATA_DIR: '/data', API_KEY: 'k', HOST: 'example.test' } });
    expect(config.apps.files).toMatchObject({ transport: 'stdio', command: 'node', args: ['server.js', '--root=/data'], env: { KEY: 'k' }, cwd: dir });
    expect(config.apps.remote).toMatchObject({ transport: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer none' } });
    expect(config.apps.legacy).toMatchObject({ transport: 'sse', url: 'http://127.0.0.1:9/events' });
    expect(config.apps.guessed).toMatchObject({ transport: 'sse' });
    expect(Object.keys(config.apps).sort()).toEqual(['files', 'guessed', 'legacy', 'remote']);
  });

  it('warns about each server it cannot use, saying why and where, and loads the rest', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'import: [.mcp.json]\n', '.mcp.json': claudeCode });
    const config = await loadConfig({ cwd: dir, env: { DATA_DIR: '/data', API_KEY: 'k', HOST: 'h' } });
    expect(config.warnings.map(formatDiagnostic)).toEqual([
      '.mcp.json:34:20: server `missing` cannot be used: environment variable `NOT_SET` is not set (in `env.SECRET`); a workflow that uses it fails, the others run\n' +
        '  hint: set NOT_SET in the environment (or in .env beside runner.config.yaml), or give a default: ${NOT_SET:-value}',
      '.mcp.json:38:15: server `ws` cannot be used: unknown `type` `websocket`; a workflow that uses it fails, the others run\n' +
        '  hint: runner speaks `stdio`, `http` (Streamable HTTP) and `sse` (legacy HTTP+SSE)',
      '.mcp.json:41:5: server `my.server` cannot be used: `my.server` is not a valid app name (letters, digits, `_` and `-`); a workflow that uses it fails, the others run\n' +
        '  hint: import it under another name: `rename: { "my.server": my-server }`',
      ".mcp.json:44:5: server `runner` is not imported: `runner` is the name of runner's built-in tools\n" +
        '  hint: to use this server, import it under another name: `rename: { runner: NAME }`',
    ]);
    expect(config.warnings.every((warning) => warning.severity === 'warning')).toBe(true);
    expect(Object.keys(config.unusableApps ?? {}).sort()).toEqual(['missing', 'my.server', 'ws']);
  });

  it('makes using an unusable server an error at the server in the imported file, and leaves other workflows alone', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'import: [.mcp.json]\n', '.mcp.json': claudeCode });
    const config = await loadConfig({ cwd: dir, env: { DATA_DIR: '/data', API_KEY: 'k', HOST: 'h' } });
    expect(parseWorkflowText('name: ok\nsteps:\n  - id: a\n    uses: files.read\n', 'ok.yaml', config).steps).toHaveLength(1);
    const problems = await problemsOf(Promise.resolve().then(() => parseWorkflowText('name: bad\nsteps:\n  - id: a\n    uses: missing.read\n', 'bad.yaml', config)));
    expect(problems).toEqual([
      '.mcp.json:34:20: app `missing` cannot be used: environment variable `NOT_SET` is not set (in `env.SECRET`) (needed by `uses: missing.read` of step `a` at bad.yaml:4:11)\n' +
        '  hint: set NOT_SET in the environment (or in .env beside runner.config.yaml), or give a default: ${NOT_SET:-value}',
    ]);
  });
});

describe('import: VS Code .vscode/mcp.json', () => {
  it('reads JSON with comments and trailing commas, fills ${env:}, ${userHome} and ${workspaceFolder}, and runs servers in the workspace folder', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'import: [.vscode/mcp.json]\n', '.vscode/mcp.json': vsCode });
    const config = await loadConfig({ cwd: dir, env: { HOME: '/home/me', LEVEL: 'debug' } });
    expect(config.apps.local).toMatchObject({
      transport: 'stdio',
      command: 'node',
      args: [`${dir}/server.js`, '/home/me/data'],
      env: { LEVEL: 'debug' },
      cwd: dir,
    });
    expect(config.warnings.map(formatDiagnostic)).toEqual([
      '.vscode/mcp.json:14:45: server `github` cannot be used: `${input:token}` is asked of the user by VS Code, which runner cannot do (in `headers.Authorization`); a workflow that uses it fails, the others run\n' +
        '  hint: declare the server in apps: of runner.config.yaml with the value from an environment variable (${VAR}), or leave it out with `skip`',
    ]);
    expect(config.unusableApps?.github?.location).toEqual({ file: join('.vscode', 'mcp.json'), line: 14, col: 45 });
  });

  it('treats an unset ${env:VAR} as a reason, not as an empty string', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'import: [.vscode/mcp.json]\n', '.vscode/mcp.json': vsCode });
    const config = await loadConfig({ cwd: dir, env: { HOME: '/home/me' } });
    expect(config.apps.local).toBeUndefined();
    expect(config.unusableApps?.local?.reasons).toEqual(['environment variable `LEVEL` is not set (in `env.LEVEL`)']);
  });
});

describe('import options: only, skip, rename', () => {
  it('imports only, skips and renames by the names the file uses, and warns about names it does not have', async () => {
    const dir = await makeDir({
      'runner.config.yaml': [
        'import:',
        '  - { file: .mcp.json, only: [files, my.server, ghost], rename: { my.server: mine } }',
        '  - { file: .vscode/mcp.json, skip: [github, nope] }',
        '',
      ].join('\n'),
      '.mcp.json': claudeCode,
      '.vscode/mcp.json': vsCode,
    });
    const config = await loadConfig({ cwd: dir, env: { HOME: '/h', LEVEL: 'x', DATA_DIR: '/d', API_KEY: 'k' } });
    expect(Object.keys(config.apps).sort()).toEqual(['files', 'local', 'mine']);
    expect(config.unusableApps).toBeUndefined();
    expect(config.warnings.map(formatDiagnostic)).toEqual([
      'runner.config.yaml:2:49: `only` names `ghost`, but .mcp.json has no server of that name\n  hint: its servers: files, remote, legacy, guessed, off, missing, ws, my.server, runner',
      `runner.config.yaml:3:46: \`skip\` names \`nope\`, but ${join('.vscode', 'mcp.json')} has no server of that name\n  hint: its servers: local, github`,
    ]);
  });

  it('lets a server the config declares itself win without reading the imported one, and a usable server win over an unusable one', async () => {
    const dir = await makeDir({
      'runner.config.yaml': 'import: [.mcp.json, other.json]\napps:\n  ws: { command: node }\n',
      '.mcp.json': claudeCode,
      'other.json': JSON.stringify({ mcpServers: { missing: { command: 'fine' }, files: { command: 'x', env: { A: '${UNSET_TOO}' } } } }),
    });
    const config = await loadConfig({ cwd: dir, env: { DATA_DIR: '/d', API_KEY: 'k', HOST: 'h' } });
    expect(config.apps.ws).toMatchObject({ command: 'node' });
    expect(config.apps.missing).toMatchObject({ command: 'fine' });
    expect(config.apps.files).toMatchObject({ command: 'node' });
    expect(Object.keys(config.unusableApps ?? {}).sort()).toEqual(['my.server']);
  });

  it('rejects an import mapping without `file` and a rename to a bad name, in the config', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'import:\n  - { skip: [a] }\n  - { file: x.json, rename: { a: "b c" } }\n' });
    const problems = await problemsOf(loadConfig({ cwd: dir, env: {} }));
    expect(problems.join('\n')).toContain('runner.config.yaml:2:5');
    expect(problems.join('\n')).toContain('runner.config.yaml:3:');
  });
});

describe('roots, transport and protocol', () => {
  it('gives an app the artifacts folder and the existing folders in its args by default; roots: false and explicit roots as written', async () => {
    const dir = await makeDir({
      'data/.keep': '',
      'apps/fs/.keep': '',
      'runner.config.yaml': [
        'apps:',
        '  fs: { command: npx, args: [-y, server-filesystem, data, /no/such/folder, "--dir=apps"] }',
        '  here: { command: node, args: [server.js, .], cwd: apps/fs }',
        '  none: { command: node, args: [data], roots: false }',
        '  mine: { command: node, args: [data], roots: [elsewhere] }',
        '',
      ].join('\n'),
    });
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config.apps.fs!.roots).toEqual([join(dir, 'artifacts'), join(dir, 'data'), join(dir, 'apps')]);
    expect(config.apps.here!.roots).toEqual([join(dir, 'artifacts'), join(dir, 'apps', 'fs')]);
    expect(config.apps.none!.roots).toBe(false);
    expect(config.apps.mine!.roots).toEqual([join(dir, 'elsewhere')]);
  });

  it('reads transport: sse and a pinned protocol; protocol: auto pins nothing', async () => {
    const dir = await makeDir({
      'runner.config.yaml': [
        'apps:',
        '  old: { url: "http://127.0.0.1:9/sse", transport: sse, protocol: 2025-03-26 }',
        '  new: { url: "http://127.0.0.1:9/mcp", transport: streamable-http, protocol: 2026-07-28 }',
        '  any: { command: node, protocol: auto }',
        '',
      ].join('\n'),
    });
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config.apps.old).toMatchObject({ transport: 'sse', protocol: '2025-03-26' });
    expect(config.apps.new).toMatchObject({ transport: 'http', protocol: '2026-07-28' });
    expect(config.apps.any!.protocol).toBeUndefined();
  });

  it('rejects transport on a stdio app and an unknown protocol version', async () => {
    const dir = await makeDir({ 'runner.config.yaml': 'apps:\n  a: { command: node, transport: sse }\n  b: { url: "http://x", protocol: 2024-01-01 }\n' });
    const problems = await problemsOf(loadConfig({ cwd: dir, env: {} }));
    expect(problems.join('\n')).toContain('`protocol` of app `b`: expected `auto` or a protocol version: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26');
  });

  it('offers only 2025 versions the SDK speaks', () => {
    for (const version of PROTOCOL_CHOICES.filter((choice) => choice.startsWith('2025'))) expect(SUPPORTED_PROTOCOL_VERSIONS).toContain(version);
  });
});

describe('blankCommentsAndTrailingCommas', () => {
  it('keeps every other character at its offset', () => {
    const text = '{ "a": "//not a comment", /* c */ "b": [1, 2,], // end\n}';
    const blanked = blankCommentsAndTrailingCommas(text);
    expect(blanked).toHaveLength(text.length);
    expect(JSON.parse(blanked)).toEqual({ a: '//not a comment', b: [1, 2] });
  });
});
