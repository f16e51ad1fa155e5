import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { BUILTIN_APP, BUILTIN_TOOLS } from '../builtins/catalog.js';
import { throwOnDiagnostics, type Diagnostic } from '../errors.js';
import { withDotenv } from './dotenv.js';
import { readMcpServersFile } from './import-mcp-json.js';
import { CONFIG_NAMES, normalizeConfig, type AppDeclaration } from './normalize.js';
import { configSchema, type RawConfig } from './schema.js';
import { diagnoseSchemaErrors, validateAgainst } from './schema-diagnostics.js';
import type { RunnerConfig } from './types.js';
import { locatePath, parseYamlSource, readSourceFile, type YamlSource } from './yaml-source.js';

import { findConfigFile, type LoadConfigOptions } from './find-config.js';

export { CONFIG_FILE_NAME, findConfigFile, type LoadConfigOptions } from './find-config.js';

/**
 * Loads runner.config.yaml (see findConfigFile) and normalizes it; with no
 * config file, the defaults with `cwd` as the config folder. `${VAR}` expands
 * from the environment over the `.env` file beside the config (see
 * withDotenv). Every problem is collected, then thrown as one RunnerError
 * with code `config`.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<RunnerConfig> {
  const file = await findConfigFile(options);
  if (file === null) {
    return normalizeConfig({ raw: {}, file: null, dir: resolve(options.cwd), apps: [], env: options.env }, []);
  }
  const dir = dirname(file);
  const shownAs = showPath(file, options.cwd);
  const diagnostics: Diagnostic[] = [];
  const text = await readSourceFile(file, shownAs, diagnostics);
  throwOnDiagnostics('config', diagnostics);
  const { source, data } = parseYamlSource(text!, shownAs, diagnostics);
  throwOnDiagnostics('config', diagnostics);

  // An empty file is an empty config.
  const raw = data ?? {};
  diagnostics.push(...diagnoseSchemaErrors(validateAgainst(configSchema, raw), source, raw, CONFIG_NAMES));
  throwOnDiagnostics('config', sortByLocation(diagnostics));

  const config = raw as RawConfig;
  if (config.apps && Object.hasOwn(config.apps, BUILTIN_APP)) diagnostics.push(reservedAppName(source));
  const ownApps = Object.entries(config.apps ?? {}).map(
    ([name, app]): AppDeclaration => ({ name, raw: app, source, path: ['apps', name], names: CONFIG_NAMES }),
  );
  const warnings: Diagnostic[] = [];
  const imported = await readImports(config.import ?? [], { source, dir, cwd: options.cwd, skip: new Set(Object.keys(config.apps ?? {})) }, diagnostics, warnings);
  const env = await withDotenv(dir, options.env, (path) => showPath(path, options.cwd));
  const normalized = normalizeConfig({ raw: config, file, dir, apps: [...imported, ...ownApps], env, warnings }, diagnostics);
  throwOnDiagnostics('config', sortByLocation(diagnostics));
  return normalized;
}

/** Reads each `import` file in order; a later file wins over an earlier one on a name clash. */
async function readImports(
  files: string[],
  context: { source: YamlSource; dir: string; cwd: string; skip: ReadonlySet<string> },
  diagnostics: Diagnostic[],
  warnings: Diagnostic[],
): Promise<AppDeclaration[]> {
  const byName = new Map<string, AppDeclaration>();
  for (const [index, entry] of files.entries()) {
    const file = resolve(context.dir, entry);
    try {
      for (const app of await readMcpServersFile(file, showPath(file, context.cwd), context.skip, diagnostics, warnings)) {
        byName.delete(app.name);
        byName.set(app.name, app);
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      diagnostics.push({
        location: locatePath(context.source, ['import', index]),
        message: `cannot read import \`${entry}\`: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
        hint: `paths in \`import\` are relative to the config folder (${context.dir})`,
      });
    }
  }
  return [...byName.values()];
}

/** `apps: { runner: ... }` in runner.config.yaml: the name belongs to the built-in tools. */
function reservedAppName(source: YamlSource): Diagnostic {
  return {
    location: locatePath(source, ['apps', BUILTIN_APP], 'key'),
    message: `app name \`${BUILTIN_APP}\` is reserved for runner's built-in tools (${BUILTIN_TOOLS.map((tool) => `${BUILTIN_APP}.${tool.name}`).join(', ')})`,
    hint: 'give this app another name, and use that name in `uses:`',
  };
}

/** A path as messages show it: relative to the working folder when inside it. */
export function showPath(file: string, cwd: string): string {
  const path = relative(cwd, file);
  return path === '' || path.startsWith('..') || isAbsolute(path) ? file : path;
}

/** Diagnostics in file order (unlocated ones first), so output reads top to bottom. */
export function sortByLocation(diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics.sort(
    (a, b) =>
      (a.location?.file ?? '').localeCompare(b.location?.file ?? '') ||
      (a.location?.line ?? 0) - (b.location?.line ?? 0) ||
      (a.location?.col ?? 0) - (b.location?.col ?? 0),
  );
}
