import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { BUILTIN_APP, BUILTIN_TOOLS } from '../builtins/catalog.js';
import { throwOnDiagnostics, type Diagnostic } from '../errors.js';
import { withDotenv } from './dotenv.js';
import { readImportFile } from './import-mcp-json.js';
import { CONFIG_NAMES, normalizeConfig, type AppDeclaration } from './normalize.js';
import { validateConfig } from './compiled-schemas.js';
import type { RawConfig, RawImport } from './schema.js';
import { diagnoseSchemaErrors, validateAgainst } from './schema-diagnostics.js';
import type { RunnerConfig, UnusableApp } from './types.js';
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
  diagnostics.push(...diagnoseSchemaErrors(validateAgainst(validateConfig, raw), source, raw, CONFIG_NAMES));
  throwOnDiagnostics('config', sortByLocation(diagnostics));

  const config = raw as RawConfig;
  if (config.apps && Object.hasOwn(config.apps, BUILTIN_APP)) diagnostics.push(reservedAppName(source));
  const ownApps = Object.entries(config.apps ?? {}).map(
    ([name, app]): AppDeclaration => ({ name, raw: app, source, path: ['apps', name], names: CONFIG_NAMES }),
  );
  const warnings: Diagnostic[] = [];
  const env = await withDotenv(dir, options.env, (path) => showPath(path, options.cwd));
  const imported = await readImports(config.import ?? [], { source, dir, cwd: options.cwd, env, declared: new Set(Object.keys(config.apps ?? {})) }, diagnostics, warnings);
  const normalized = normalizeConfig(
    { raw: config, file, dir, apps: [...imported.declarations, ...ownApps], env, warnings, unusableApps: imported.unusable },
    diagnostics,
  );
  throwOnDiagnostics('config', sortByLocation(diagnostics));
  return normalized;
}

/**
 * Reads each `import` file in order. On a name clash a later file wins over
 * an earlier one, except that a server runner can use always wins over one it
 * cannot.
 */
async function readImports(
  entries: RawImport[],
  context: { source: YamlSource; dir: string; cwd: string; env: NodeJS.ProcessEnv; declared: ReadonlySet<string> },
  diagnostics: Diagnostic[],
  warnings: Diagnostic[],
): Promise<{ declarations: AppDeclaration[]; unusable: UnusableApp[] }> {
  const usable = new Map<string, AppDeclaration>();
  const unusable = new Map<string, UnusableApp>();
  for (const [index, entry] of entries.entries()) {
    const options = typeof entry === 'string' ? { file: entry } : entry;
    const file = resolve(context.dir, options.file!);
    try {
      const result = await readImportFile(
        {
          file,
          shownAs: showPath(file, context.cwd),
          ...(options.only && { only: options.only }),
          ...(options.skip && { skip: options.skip }),
          ...(options.rename && { rename: options.rename }),
          declared: context.declared,
          env: context.env,
          locateOption: (path) => locatePath(context.source, ['import', index, ...path]),
        },
        diagnostics,
        warnings,
      );
      for (const app of result.declarations) {
        usable.delete(app.name);
        usable.set(app.name, app);
        unusable.delete(app.name);
      }
      for (const app of result.unusable) if (!usable.has(app.name)) unusable.set(app.name, app);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      diagnostics.push({
        location: locatePath(context.source, typeof entry === 'string' ? ['import', index] : ['import', index, 'file']),
        message: `cannot read import \`${options.file}\`: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
        hint: `paths in \`import\` are relative to the config folder (${context.dir})`,
      });
    }
  }
  return { declarations: [...usable.values()], unusable: [...unusable.values()] };
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
      compareFiles(a.location?.file ?? '', b.location?.file ?? '') ||
      (a.location?.line ?? 0) - (b.location?.line ?? 0) ||
      (a.location?.col ?? 0) - (b.location?.col ?? 0),
  );
}

/** Files in locale order; the same file without asking ICU (its first `localeCompare` of a process costs about 40 ms). */
function compareFiles(a: string, b: string): number {
  return a === b ? 0 : a.localeCompare(b);
}
