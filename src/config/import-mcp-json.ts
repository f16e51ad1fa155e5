import { homedir } from 'node:os';
import { basename, dirname } from 'node:path';
import { BUILTIN_APP } from '../builtins/catalog.js';
import type { Diagnostic, SourceLocation } from '../errors.js';
import { readServerEntry, type EntryProblem } from './import-entry.js';
import { mcpServersResolver, vsCodeResolver, type PlaceholderResolver } from './import-placeholders.js';
import type { AppDeclaration } from './normalize.js';
import type { PathNames } from './schema-diagnostics.js';
import type { UnusableApp } from './types.js';
import { locatePath, readSourceFile, type YamlPath } from './yaml-source.js';
import { isRecord } from '../is-record.js';

// Reads apps from other MCP clients' files: the `mcpServers` of Claude
// Desktop, Claude Code (.mcp.json) and Cursor, and the `servers` of VS Code
// (.vscode/mcp.json, or `mcp.servers` of its settings). Those files belong to
// the other tools and hold servers runner may never run, so a server it
// cannot use is a warning that names why, never an error that stops every
// workflow: the error comes only when a workflow uses that server.

const APP_NAME = /^[A-Za-z0-9_-]+$/;

/** One `import` entry, resolved. */
export interface ImportRequest {
  /** Absolute path of the file. */
  file: string;
  /** The file as messages show it. */
  shownAs: string;
  /** Names (as the file has them) to import, all when absent. */
  only?: readonly string[];
  /** Names (as the file has them) not to import. */
  skip?: readonly string[];
  /** Name in the file → app name. */
  rename?: Record<string, string>;
  /** App names the config declares itself: they win, and the file's servers of those names are not read. */
  declared: ReadonlySet<string>;
  env: NodeJS.ProcessEnv;
  /** Where an `only`, `skip` or `rename` name is written in runner.config.yaml (`['only', 0]`, `['rename', 'old']`). */
  locateOption: (path: YamlPath) => SourceLocation | undefined;
}

export interface ImportResult {
  declarations: AppDeclaration[];
  unusable: UnusableApp[];
}

/** Where a file keeps its servers, and how its client fills `${...}`. */
interface FileFormat {
  path: YamlPath;
  resolver: PlaceholderResolver;
  /** VS Code starts a server in the workspace folder; the others say nothing, so the config folder stays. */
  defaultCwd?: string;
  baseDir?: string;
}

const IMPORT_NAMES: PathNames = {
  root: 'the file',
  owner: (path) => {
    const at = path[0] === 'mcp' ? 2 : 1;
    return path.length > at ? { label: `server \`${String(path[at])}\``, length: at + 1 } : undefined;
  },
};

/**
 * Reads the servers of one imported file. A file that cannot be parsed, or
 * holds no servers mapping, is an error (in `diagnostics`); a server that
 * cannot be used is a warning (in `warnings`) and an entry of `unusable`.
 * A server named `runner` is skipped with a warning: that name belongs to
 * the built-in tools, and the file is another tool's, which the user may not
 * want to edit (`rename` imports it under another name).
 */
export async function readImportFile(request: ImportRequest, diagnostics: Diagnostic[], warnings: Diagnostic[]): Promise<ImportResult> {
  const result: ImportResult = { declarations: [], unusable: [] };
  const text = await readSourceFile(request.file, request.shownAs, diagnostics);
  if (text === undefined) return result;
  const problems: Diagnostic[] = [];
  // jsonc-parser is loaded only by a config that imports another tool's file.
  const { parseJsoncSource } = await import('./import-jsonc.js');
  const { source, data } = parseJsoncSource(text, request.shownAs, problems);
  if (problems.length > 0) {
    diagnostics.push(...problems);
    return result;
  }
  const format = detectFormat(data, request);
  const servers = format && valueAt(data, format.path);
  if (!format || !isRecord(servers)) {
    diagnostics.push({
      location: locatePath(source, format?.path ?? []),
      message: format ? `\`${format.path.join('.')}\`: expected a mapping of server names to servers` : 'expected `mcpServers` (Claude, Cursor) or `servers` (VS Code) with the servers to import',
    });
    return result;
  }
  warnAboutMissingNames(request, Object.keys(servers), warnings);
  const only = request.only && new Set(request.only);
  const skip = new Set(request.skip ?? []);
  for (const [fileName, entry] of Object.entries(servers)) {
    if ((only && !only.has(fileName)) || skip.has(fileName)) continue;
    const name = request.rename && Object.hasOwn(request.rename, fileName) ? request.rename[fileName] : fileName;
    if (request.declared.has(name) || (isRecord(entry) && entry.disabled === true)) continue;
    const path = [...format.path, fileName];
    if (name === BUILTIN_APP) {
      warnings.push({
        severity: 'warning',
        location: locatePath(source, path, 'key'),
        message: `server \`${fileName}\` is not imported: \`${BUILTIN_APP}\` is the name of runner's built-in tools`,
        hint: 'to use this server, import it under another name: `rename: { runner: NAME }`',
      });
      continue;
    }
    const read = readServerEntry(entry, path, { source, resolver: format.resolver, defaultCwd: format.defaultCwd, baseDir: format.baseDir, fileDir: dirname(request.file) });
    const all: EntryProblem[] = APP_NAME.test(name)
      ? read.problems
      : [{ location: locatePath(source, path, 'key'), message: `\`${name}\` is not a valid app name (letters, digits, \`_\` and \`-\`)`, hint: `import it under another name: \`rename: { "${fileName}": ${suggestName(name)} }\`` }, ...read.problems];
    if (all.length === 0 && read.raw) {
      result.declarations.push({ name, raw: read.raw, source, path, names: IMPORT_NAMES, literal: true });
      continue;
    }
    const unusable: UnusableApp = { name, location: all[0].location, reasons: all.map((problem) => problem.message), hint: all.find((problem) => problem.hint)?.hint };
    result.unusable.push(unusable);
    warnings.push({
      severity: 'warning',
      location: unusable.location,
      message: `server \`${fileName}\` cannot be used: ${unusable.reasons.join('; ')}; a workflow that uses it fails, the others run`,
      ...(unusable.hint && { hint: unusable.hint }),
    });
  }
  return result;
}

/** `mcpServers` (Claude Desktop, Claude Code, Cursor), else VS Code's `servers` (mcp.json) or `mcp.servers` (settings.json). */
function detectFormat(data: unknown, request: ImportRequest): FileFormat | undefined {
  if (!isRecord(data)) return undefined;
  const fileDir = dirname(request.file);
  if (data.mcpServers !== undefined) return { path: ['mcpServers'], resolver: mcpServersResolver(request.env) };
  const path = data.servers !== undefined ? ['servers'] : isRecord(data.mcp) && data.mcp.servers !== undefined ? ['mcp', 'servers'] : undefined;
  if (!path) return undefined;
  // `${workspaceFolder}` is the folder holding .vscode/; a file elsewhere stands for its own folder.
  const workspaceFolder = basename(fileDir) === '.vscode' ? dirname(fileDir) : fileDir;
  const userHome = request.env.HOME ?? request.env.USERPROFILE ?? homedir();
  return { path, resolver: vsCodeResolver(request.env, { workspaceFolder, userHome }), defaultCwd: workspaceFolder, baseDir: workspaceFolder };
}

/** A name in `only`, `skip` or `rename` that the file does not have is most likely a typo: say so. */
function warnAboutMissingNames(request: ImportRequest, present: readonly string[], warnings: Diagnostic[]): void {
  const has = new Set(present);
  const named: [YamlPath, string][] = [
    ...(request.only ?? []).map((name, index): [YamlPath, string] => [['only', index], name]),
    ...(request.skip ?? []).map((name, index): [YamlPath, string] => [['skip', index], name]),
    ...Object.keys(request.rename ?? {}).map((name): [YamlPath, string] => [['rename', name], name]),
  ];
  for (const [path, name] of named) {
    if (has.has(name)) continue;
    const location = request.locateOption(path);
    warnings.push({
      severity: 'warning',
      ...(location && { location }),
      message: `\`${path[0]}\` names \`${name}\`, but ${request.shownAs} has no server of that name`,
      hint: present.length > 0 ? `its servers: ${present.join(', ')}` : 'it has no servers',
    });
  }
}

/** `my.server name` → `my-server-name`. */
function suggestName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'NAME';
}

function valueAt(data: unknown, path: YamlPath): unknown {
  let current = data;
  for (const segment of path) current = isRecord(current) ? current[String(segment)] : undefined;
  return current;
}
