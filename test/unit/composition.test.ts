import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { openCommandContext } from '../../src/cli/context.js';
import type { CliIO } from '../../src/cli/io.js';
import { STORE_FILE } from '../../src/store/sqlite-run-store.js';
import { createWorkspace, imageAppArgs } from '../helpers/workspace.js';

function ioIn(cwd: string): CliIO & { errors: string[] } {
  const errors: string[] = [];
  return { stdout: () => {}, stderr: (text) => errors.push(text), stdin: new PassThrough(), stderrIsTTY: false, cwd, env: {}, errors };
}

const imageYaml = `apps:\n  image:\n    command: node\n    args: ${JSON.stringify(imageAppArgs)}\n`;

/** A workspace whose config loads with one warning: an imported server named like the built-in tools. */
function warnedWorkspace() {
  const workspace = createWorkspace(`${imageYaml}import: [.mcp.json]\n`);
  workspace.write('.mcp.json', JSON.stringify({ mcpServers: { runner: { command: 'node' } } }));
  return workspace;
}

describe('the command context', () => {
  it('loads the config once and opens nothing a command does not ask for', async () => {
    const workspace = warnedWorkspace();
    const io = ioIn(workspace.dir);
    const context = await openCommandContext({}, io);
    expect(context.config.file).toBe(workspace.config);
    expect(io.errors.join('')).toContain('server `runner` is not imported');
    await context.close();
    // No app started, no store opened: the artifacts folder was never even created.
    expect(existsSync(workspace.artifacts)).toBe(false);
  });

  it('prints no config warnings when asked not to', async () => {
    const workspace = warnedWorkspace();
    const io = ioIn(workspace.dir);
    const context = await openCommandContext({ config: workspace.config }, io, { warn: false });
    expect(context.config.warnings).toHaveLength(1);
    expect(io.errors).toEqual([]);
    await context.close();
  });

  it('makes each part once, and closes the apps before the store', async () => {
    const workspace = createWorkspace(imageYaml);
    const context = await openCommandContext({}, ioIn(workspace.dir));
    const logDir = join(workspace.artifacts, 'logs');
    const apps = context.apps(logDir);
    expect(context.apps()).toBe(apps);
    expect(() => context.apps(join(workspace.artifacts, 'other'))).toThrow(/log folder/);
    expect(await context.limits()).toBe(await context.limits());
    const store = await context.store();
    expect(await context.store()).toBe(store);
    expect(existsSync(join(workspace.artifacts, STORE_FILE))).toBe(true);

    const connection = await apps.get('image');
    expect(connection.alive).toBe(true);
    expect(existsSync(join(logDir, 'image.log'))).toBe(true);
    const closeApps = vi.spyOn(apps, 'closeAll');
    const closeStore = vi.spyOn(store, 'close');
    await Promise.all([context.close(), context.close()]);

    expect(connection.alive).toBe(false);
    expect(closeApps).toHaveBeenCalledTimes(1);
    expect(closeStore).toHaveBeenCalledTimes(1);
    expect(closeApps.mock.invocationCallOrder[0]).toBeLessThan(closeStore.mock.invocationCallOrder[0]!);
    expect(() => store.listRuns({ limit: 1 })).toThrow();
    // Closed for good: a part asked for now would never be closed.
    expect(() => context.apps()).toThrow(/closed/);
    await expect(context.store()).rejects.toThrow(/closed/);
  });
});
