import { join } from 'node:path';
import { writeFileAtomic } from '../artifacts/atomic-file.js';
import type { RunnerConfig } from '../config/types.js';
import { locatePath, parseYamlSource, readSourceFile, type YamlPath, type YamlSource } from '../config/yaml-source.js';
import { throwOnDiagnostics, type Diagnostic } from '../errors.js';
import { hashPinnedFields, sortKeys } from './pin.js';
import { LOCK_VERSION, type LockFile } from './types.js';

/** The lockfile's name; it lives beside the config. */
export const LOCK_FILE_NAME = 'runner.lock';

/** Where a config's lockfile is: beside the config file (in its folder). */
export function lockFilePath(config: Pick<RunnerConfig, 'dir'>): string {
  return join(config.dir, LOCK_FILE_NAME);
}

/** The lock as written: JSON, keys sorted at every level (`version` first), 2-space indent, a final newline. */
export function serializeLock(lock: LockFile): string {
  return JSON.stringify({ version: lock.version, apps: sortKeys(lock.apps) }, null, 2) + '\n';
}

/** Writes the lock atomically (a temp file, then rename): a reader never sees half of it. */
export function writeLockFile(file: string, lock: LockFile): void {
  writeFileAtomic(file, serializeLock(lock));
}

const HINT = 'fix it, or delete it and run `runner lock` to write it again (then review its diff before committing it)';

/**
 * Reads a lockfile; undefined when there is none (then nothing is checked).
 * A malformed one throws a `config` RunnerError (exit 2) with file:line:col
 * of each problem, and a tool whose fields do not match its hash is one.
 */
export async function readLockFile(file: string): Promise<LockFile | undefined> {
  const diagnostics: Diagnostic[] = [];
  let text: string | undefined;
  try {
    text = await readSourceFile(file, file, diagnostics, { kind: 'lockfiles', hint: HINT });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (text === undefined) throwOnDiagnostics('config', diagnostics);
  const { source, data } = parseYamlSource(text!, file, diagnostics, { json: true });
  throwOnDiagnostics('config', diagnostics);
  checkLock(source, data, diagnostics);
  throwOnDiagnostics('config', diagnostics);
  return data as LockFile;
}

/** Checks the lock's shape, pushing one diagnostic per problem. */
function checkLock(source: YamlSource, data: unknown, diagnostics: Diagnostic[]): void {
  const problem = (path: YamlPath, message: string, expected?: string) =>
    diagnostics.push({ location: locatePath(source, path), message, expected, hint: HINT });
  if (!isObject(data)) return void problem([], 'runner.lock must be a JSON object', '{ "version": 1, "apps": { ... } }');
  if (data.version !== LOCK_VERSION) problem(['version'], `runner.lock has version ${JSON.stringify(data.version)}; this runner reads version ${LOCK_VERSION}`);
  for (const key of Object.keys(data)) if (key !== 'version' && key !== 'apps') problem([key], `unknown key \`${key}\` in runner.lock`, '`version` and `apps`');
  if (!isObject(data.apps)) return void problem(['apps'], '`apps` must be an object of app name → app', 'an object');
  for (const [name, app] of Object.entries(data.apps)) {
    const at: YamlPath = ['apps', name];
    if (!isObject(app)) {
      problem(at, `app \`${name}\` must be an object`, '{ "server", "protocolVersion", "tools" }');
      continue;
    }
    const server = app.server;
    if (server !== null && !(isObject(server) && typeof server.name === 'string' && typeof server.version === 'string')) {
      problem([...at, 'server'], `\`server\` of app \`${name}\` must be null or { "name": string, "version": string }`);
    }
    if (app.protocolVersion !== null && typeof app.protocolVersion !== 'string') problem([...at, 'protocolVersion'], `\`protocolVersion\` of app \`${name}\` must be a string or null`);
    if (!isObject(app.tools)) {
      problem([...at, 'tools'], `\`tools\` of app \`${name}\` must be an object of tool name → tool`);
      continue;
    }
    for (const [tool, locked] of Object.entries(app.tools)) checkTool([...at, 'tools', tool], `${name}.${tool}`, locked, problem);
  }
}

const TOOL_KEYS = new Set(['hash', 'oversize', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations']);

function checkTool(at: YamlPath, name: string, locked: unknown, problem: (path: YamlPath, message: string, expected?: string) => void): void {
  if (!isObject(locked)) return void problem(at, `tool \`${name}\` must be an object`);
  for (const key of Object.keys(locked)) if (!TOOL_KEYS.has(key)) problem([...at, key], `unknown key \`${key}\` in tool \`${name}\``, [...TOOL_KEYS].map((k) => `\`${k}\``).join(', '));
  if (typeof locked.hash !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(locked.hash)) return void problem([...at, 'hash'], `\`hash\` of tool \`${name}\` must be sha256: and 64 hex digits`);
  if (locked.oversize !== undefined && locked.oversize !== true) problem([...at, 'oversize'], `\`oversize\` of tool \`${name}\` can only be true`);
  for (const key of ['title', 'description'] as const) {
    if (locked[key] !== undefined && typeof locked[key] !== 'string') problem([...at, key], `\`${key}\` of tool \`${name}\` must be a string`);
  }
  if (locked.annotations !== undefined && !isObject(locked.annotations)) problem([...at, 'annotations'], `\`annotations\` of tool \`${name}\` must be an object`);
  // The fields are what a reviewer reads; the hash is what is compared. They must agree.
  if (!locked.oversize && hashPinnedFields(locked) !== locked.hash) {
    problem([...at, 'hash'], `the hash of tool \`${name}\` does not match its fields (was runner.lock edited by hand?)`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
