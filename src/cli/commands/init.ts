import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CONFIG_FILE_NAME } from '../../config/find-config.js';
import { ExitCode, RunnerError } from '../../errors.js';
import { LOCK_FILE_NAME, serializeLock } from '../../lock/lock-file.js';
import { pinTool } from '../../lock/pin.js';
import { LOCK_VERSION, type LockFile } from '../../lock/types.js';
import type { CliIO, GlobalOptions } from '../io.js';

/**
 * The starter app: the MCP reference server ("everything"), started through
 * npx. It needs nothing but Node, which runner needs anyway, so it works in
 * an empty folder as well as in a clone of this repository (where npx finds
 * the same version among the devDependencies). The version is pinned because
 * the server renames its tools between releases, and the starter workflow
 * calls one of them; a test keeps it equal to the devDependency.
 */
export const STARTER_SERVER_PACKAGE = '@modelcontextprotocol/server-everything@2026.8.31';

/** The starter workflow, relative to the current folder. */
export const STARTER_WORKFLOW = 'workflows/hello.yaml';

const STARTER_CONFIG = `# runner.config.yaml: the MCP apps your workflows call, and what they may do.
# \${VAR} expands from the environment, or from a .env file beside this one.
artifacts: artifacts            # where runs write their results (one folder per run)

apps:
  # The MCP reference server, started with npx: it needs only Node. The first
  # start downloads the package, hence the generous connect-timeout. It may
  # keep running once its input closes (waiting for an answer to a request of
  # its own), hence the short stop-timeout: it has nothing to save.
  # Add your own apps beside it:
  #   notes: { command: node, args: [path/to/server.js] }     # a stdio app
  #   drive: { url: "http://127.0.0.1:3001/mcp" }             # a Streamable HTTP app
  everything:
    command: npx
    args: ["-y", "${STARTER_SERVER_PACKAGE}", "stdio"]
    connect-timeout: 2m
    stop-timeout: 200ms

policy:
  read-only: allow              # tools that say they only read
  destructive: ask              # tools that may delete or overwrite: ask first (denied without a terminal)
  rules: []                     # e.g. - { match: "everything.get-*", action: allow }
`;

const STARTER_WORKFLOW_TEXT = `# A first workflow: one tool call, then a built-in step that saves its text.
#   runner run ${STARTER_WORKFLOW} -i name=Ada
name: hello
description: Echo a greeting through an MCP app and save it as a file
inputs:
  name: { type: string, default: world, description: Who to greet }
steps:
  - id: greet
    uses: everything.echo
    with:
      message: "Hello, \${{ inputs.name }}!"
  - id: save
    uses: runner.save
    with:
      name: greeting.txt
      content: \${{ steps.greet.text }}
`;

/**
 * The starter lock: the one tool the starter workflow calls, as the pinned
 * server version lists it. Known without starting the server (init never
 * downloads anything); the getting-started test runs the starter workflow
 * against this lock, so it cannot drift from the pinned version unseen.
 */
export function starterLock(): LockFile {
  const echo = pinTool({
    name: 'echo',
    title: 'Echo Tool',
    description: 'Echoes back the input string',
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { message: { type: 'string', description: 'Message to echo' } },
      required: ['message'],
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  });
  return {
    version: LOCK_VERSION,
    apps: { everything: { server: { name: 'mcp-servers/everything', version: '2.0.0' }, protocolVersion: '2025-11-25', tools: { echo } } },
  };
}

/**
 * `runner init`: writes a starter runner.config.yaml, workflow and
 * runner.lock in the current folder. Never overwrites: when any of them
 * exists, nothing is written (exit 2, naming it).
 */
export async function initCommand(_options: GlobalOptions, io: CliIO): Promise<number> {
  const files: [string, string][] = [
    [CONFIG_FILE_NAME, STARTER_CONFIG],
    [STARTER_WORKFLOW, STARTER_WORKFLOW_TEXT],
    [LOCK_FILE_NAME, serializeLock(starterLock())],
  ];
  for (const [name] of files) {
    if (await exists(join(io.cwd, name))) {
      throw new RunnerError('usage', `${name} already exists in ${io.cwd}; runner init never overwrites a file, so nothing was written`, {
        hint: 'run `runner init` in an empty folder, or move the file away first',
      });
    }
  }
  for (const [name, text] of files) {
    const file = join(io.cwd, name);
    await mkdir(dirname(file), { recursive: true });
    // `wx`: a file that appeared since the check above is still not overwritten.
    await writeFile(file, text, { flag: 'wx' });
    io.stdout(`wrote ${name}\n`);
  }
  io.stdout(
    [
      '',
      'The config has one app, `everything` (the MCP reference server, started with npx;',
      'its first start downloads it). Next:',
      `  runner run ${STARTER_WORKFLOW}`,
      '',
      'Then: `runner tools everything` lists its tools, `runner tools everything.echo` shows one,',
      'and `runner call everything.echo message=hi` calls it.',
      'runner.lock pins the tools your workflows call: a run stops if one changes.',
      'After adding a step, run `runner lock` to pin its tool too.',
      '',
    ].join('\n'),
  );
  return ExitCode.succeeded;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
