import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/in-process.js';
import { createWorkspace, faultyApp, runCli } from '../helpers/workspace.js';

// A config that imports a VS Code file and a Claude Desktop file, each with
// one server runner cannot use, runs every workflow that does not use those
// servers; the one that does fails with the reason, positioned in the
// imported file.

const vsCode = `{
  // written by VS Code's "MCP: Add Server"
  "inputs": [{ "type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true }],
  "servers": {
    "local": {
      "type": "stdio",
      "command": "node",
      "args": [${JSON.stringify(faultyApp)}, "--name", "\${env:FIXTURE_NAME}"],
    },
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.example/mcp/",
      "headers": { "Authorization": "Bearer \${input:gh-token}" },
    },
  },
}
`;

const claudeDesktop = JSON.stringify(
  {
    mcpServers: {
      desktop: { command: 'node', args: [faultyApp, '--name', 'desktop'] },
      'web search': { command: 'npx', args: ['-y', 'some-search-server'] },
      retired: { command: 'node', args: ['gone.js'], disabled: true },
    },
    globalShortcut: 'Ctrl+Space',
  },
  null,
  2,
);

function workspace() {
  const ws = createWorkspace('import:\n  - .vscode/mcp.json\n  - claude_desktop_config.json\n');
  ws.write('.vscode/mcp.json', vsCode);
  ws.write('claude_desktop_config.json', claudeDesktop);
  const run = (workflowText: string) => {
    const workflow = ws.write('wf.yaml', workflowText);
    return runInProcess(['--config', ws.config, 'run', workflow, '--json'], { cwd: ws.dir, env: { FIXTURE_NAME: 'vscode-local' } });
  };
  return { ws, run };
}

describe('imports with servers runner cannot use', () => {
  it('are read by the runner command as installed, JSONC included', async () => {
    // The in-process tests load the modules tsc wrote; the command runs the bundle, which once could not load jsonc-parser.
    const { ws } = workspace();
    const workflow = ws.write('wf.yaml', 'name: ok\nsteps:\n  - id: a\n    uses: local.echo\n    with: { text: hi }\n');
    const result = await runCli(['--config', ws.config, 'validate', workflow], { cwd: ws.dir, env: { FIXTURE_NAME: 'vscode-local' } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`ok ${workflow} (1 step)\n`);
    expect(result.stderr).toContain('warning: .vscode/mcp.json:13:45: server `github` cannot be used');
  });

  it('runs a workflow that uses the other servers, warning about the unusable ones with file:line:col', async () => {
    const { run } = workspace();
    const result = await run(
      'name: ok\nsteps:\n  - id: a\n    uses: local.echo\n    with: { text: from vscode }\n  - id: b\n    uses: desktop.echo\n    with: { text: from claude }\n',
    );
    expect(result.code, result.stderr).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record.steps.map((step: { text: string }) => step.text)).toEqual(['from vscode', 'from claude']);
    expect(record.apps.local.server.name).toBe('vscode-local');
    expect(result.stderr).toContain(
      'warning: .vscode/mcp.json:13:45: server `github` cannot be used: `${input:gh-token}` is asked of the user by VS Code, which runner cannot do (in `headers.Authorization`)',
    );
    expect(result.stderr).toContain('warning: claude_desktop_config.json:11:5: server `web search` cannot be used: `web search` is not a valid app name');
    expect(result.stderr).not.toContain('retired');
  });

  it('fails a workflow that uses an unusable server, at the server in the imported file, with exit 2', async () => {
    const { run } = workspace();
    const result = await run('name: gh\nsteps:\n  - id: issues\n    uses: github.list_issues\n');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      '.vscode/mcp.json:13:45: app `github` cannot be used: `${input:gh-token}` is asked of the user by VS Code, which runner cannot do (in `headers.Authorization`) (needed by `uses: github.list_issues` of step `issues` at',
    );
    expect(result.stderr).toContain('wf.yaml:4:11)');
    expect(result.stderr).not.toContain('unknown app');
  });
});
