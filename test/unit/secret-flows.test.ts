import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { traceSecretFlows } from '../../src/check/secret-flows.js';
import { loadConfig } from '../../src/config/load.js';
import { parseWorkflowText } from '../../src/workflow/load.js';

const ENV = { API_KEY: 'key-1234567890', HOOK_TOKEN: 'hook-abcdefghij', UNRELATED: 'x' };

async function configWith(body: string) {
  const dir = mkdtempSync(join(tmpdir(), 'runner-flows-'));
  writeFileSync(join(dir, 'runner.config.yaml'), body);
  return loadConfig({ cwd: dir, env: ENV });
}

const CONFIG = `
apps:
  mail:
    command: node
    args: [server.js]
    env: { API_KEY: "\${API_KEY}", LEVEL: warn }
  hooks:
    url: http://127.0.0.1:9/mcp?token=\${HOOK_TOKEN}
    headers: { X-Hook: "\${HOOK_TOKEN}" }
  store:
    url: http://127.0.0.1:9/mcp
    auth: { type: client-credentials, client-id: runner, client-secret: "\${API_KEY}" }
secrets: [API_KEY, HOOK_TOKEN, MISSING_ONE]
`;

describe('traceSecretFlows', () => {
  it('names every app that receives a secret from the config, and how', async () => {
    const config = await configWith(CONFIG);
    const flows = traceSecretFlows(config, []);
    expect(flows.map((flow) => flow.name)).toEqual(['API_KEY', 'HOOK_TOKEN', 'MISSING_ONE']);
    expect(flows[0]!.apps).toEqual([
      { app: 'mail', via: 'env', key: 'API_KEY' },
      { app: 'store', via: 'auth', key: 'client-secret' },
    ]);
    expect(flows[1]!.apps).toEqual([
      { app: 'hooks', via: 'url', key: null },
      { app: 'hooks', via: 'headers', key: 'X-Hook' },
    ]);
    expect(flows[2]).toEqual({ name: 'MISSING_ONE', apps: [], steps: [] });
    // Names and places only: no value is ever part of the answer.
    expect(JSON.stringify(flows)).not.toMatch(/key-1234567890|hook-abcdefghij/);
  });

  it('follows env reads, whole-env reads, literals and the steps that read a carrying step', async () => {
    const config = await configWith(CONFIG);
    const text = [
      'name: wf',
      'steps:',
      '  - id: plain', //                     reads nothing secret
      '    uses: mail.send',
      '    with: { to: "${{ env.UNRELATED }}" }',
      '  - id: direct', //                    env.API_KEY, case-insensitively
      '    uses: mail.send',
      '    with: { body: "key: ${{ env.api_key }}" }',
      '  - id: echo', //                      reads a step that carries it
      '    uses: hooks.post',
      '    with: { text: "${{ steps.direct.outputs.text }}" }',
      '  - id: shaped', //                    a transform of a carrying step
      '    uses: runner.transform',
      '    with: { input: "${{ steps.echo.outputs }}", expression: "$" }',
      '  - id: everything', //                all of env
      '    uses: hooks.post',
      '    with: { text: "${{ toJSON(env) }}" }',
      '  - id: pasted', //                    the value written out
      '    uses: hooks.post',
      '    with: { text: "key-1234567890" }',
      '  - id: gated', //                     only `if` reads it: never sent
      '    uses: hooks.post',
      "    if: ${{ env.API_KEY != '' }}",
      '    with: { text: hi }',
    ].join('\n');
    const workflow = parseWorkflowText(text, join(config.dir, 'wf.yaml'), config);
    const [apiKey, hookToken] = traceSecretFlows(config, [workflow]);
    expect(apiKey!.steps.map((flow) => [flow.step, flow.through])).toEqual([
      ['direct', ['env.API_KEY']],
      ['echo', ['steps.direct']],
      ['shaped', ['steps.echo']],
      ['everything', ['env']],
      ['pasted', ['literal']],
    ]);
    expect(apiKey!.steps[0]!.location).toMatchObject({ file: join(config.dir, 'wf.yaml'), line: 8 });
    expect(apiKey!.steps[4]!.location).toMatchObject({ line: 20 });
    expect(hookToken!.steps.map((flow) => flow.step)).toEqual(['everything']);
  });

  it('catches a step that reads a carrying step written after it, listing steps in file order', async () => {
    const config = await configWith(CONFIG);
    const text = [
      'name: wf',
      'steps:',
      '  - id: late_reader',
      '    uses: hooks.post',
      '    needs: [source]',
      '    with: { text: "${{ steps.source.text }}" }',
      '  - id: source',
      '    uses: mail.send',
      '    with: { body: "${{ env.API_KEY }}" }',
    ].join('\n');
    const workflow = parseWorkflowText(text, join(config.dir, 'wf.yaml'), config);
    expect(traceSecretFlows(config, [workflow])[0]!.steps.map((flow) => flow.step)).toEqual(['late_reader', 'source']);
  });
});
