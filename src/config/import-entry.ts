import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import type { SourceLocation } from '../errors.js';
import { expandPlaceholders, type PlaceholderResolver } from './import-placeholders.js';
import type { RawApp } from './schema.js';
import { locateInString, locatePath, type YamlPath, type YamlSource } from './yaml-source.js';
import { isHttpUrl } from './http-url.js';
import { isRecord } from '../is-record.js';

// One server entry of an imported file → the app runner would run, or every
// reason it cannot. Other clients put keys of their own in these entries, so
// only the keys runner uses are read, and a bad one spoils only its entry.

/** A reason an imported server cannot be used, where it is written. */
export interface EntryProblem {
  location: SourceLocation;
  message: string;
  hint?: string;
}

export interface EntryContext {
  source: YamlSource;
  /** Fills `${...}` the way the file's client does. */
  resolver: PlaceholderResolver;
  /** `cwd` of a stdio server that names none (VS Code: the workspace folder); undefined: the config folder. */
  defaultCwd?: string;
  /** The folder a relative `cwd` and `envFile` resolve against (VS Code: the workspace folder); undefined: `cwd` stays as written, for the config folder. */
  baseDir?: string;
  /** The imported file's folder. */
  fileDir: string;
}

/** The `type` values of Claude, Cursor and VS Code files, and the transport each means. */
const TYPES: Record<string, 'stdio' | 'http' | 'sse'> = {
  stdio: 'stdio',
  http: 'http',
  'streamable-http': 'http',
  streamableHttp: 'http',
  sse: 'sse',
};

/** Reads the server at `path` (`['servers', name]`); `raw` is set only when there are no problems. */
export function readServerEntry(entry: unknown, path: YamlPath, context: EntryContext): { raw?: RawApp; problems: EntryProblem[] } {
  const problems: EntryProblem[] = [];
  const at = (sub: YamlPath) => locatePath(context.source, [...path, ...sub]);
  if (!isRecord(entry)) {
    return { problems: [{ location: at([]), message: `expected a mapping with \`command\` or \`url\`, got ${describe(entry)}` }] };
  }
  const kind = transportOf(entry, (message, hint) => problems.push({ location: at(['type']), message, ...(hint && { hint }) }));
  if (kind === undefined) {
    if (problems.length === 0) problems.push({ location: locatePath(context.source, path, 'key'), message: 'it has neither `command` (stdio) nor `url` (HTTP)' });
    return { problems };
  }
  const text = (sub: YamlPath, value: unknown, what = 'a string'): string | undefined => {
    if (typeof value !== 'string' && typeof value !== 'number') {
      const message = value === undefined ? `\`${formatKey(sub)}\` is missing` : `\`${formatKey(sub)}\`: expected ${what}, got ${describe(value)}`;
      problems.push({ location: value === undefined ? locatePath(context.source, path, 'key') : at(sub), message });
      return undefined;
    }
    const expanded = expandPlaceholders(String(value), context.resolver);
    for (const problem of expanded.problems) {
      problems.push({ location: locateInString(context.source, [...path, ...sub], problem.offset), message: `${problem.message} (in \`${formatKey(sub)}\`)`, ...(problem.hint && { hint: problem.hint }) });
    }
    return expanded.value;
  };
  const map = (key: string): Record<string, string> | undefined => {
    const value = entry[key];
    if (value === undefined || value === null) return undefined;
    if (!isRecord(value)) {
      problems.push({ location: at([key]), message: `\`${key}\`: expected a mapping of names to strings, got ${describe(value)}` });
      return undefined;
    }
    // `null` unsets a variable in VS Code; here it just is not passed.
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, item]) => item !== null)
        .map(([name, item]) => [name, text([key, name], typeof item === 'boolean' ? String(item) : item) ?? '']),
    );
  };

  if (kind !== 'stdio') {
    const url = text(['url'], entry.url);
    if (url !== undefined && !isHttpUrl(url)) problems.push({ location: at(['url']), message: `\`url\`: expected an http:// or https:// URL, got \`${url}\`` });
    const headers = map('headers');
    if (problems.length > 0) return { problems };
    return { raw: { url, ...(headers && { headers }), ...(kind === 'sse' && { transport: 'sse' }) }, problems };
  }

  const command = text(['command'], entry.command);
  if (command === '') problems.push({ location: at(['command']), message: '`command` is empty' });
  let args: string[] | undefined;
  if (Array.isArray(entry.args)) args = entry.args.map((arg, index) => text(['args', index], arg) ?? '');
  else if (entry.args !== undefined && entry.args !== null) problems.push({ location: at(['args']), message: `\`args\`: expected a list of strings, got ${describe(entry.args)}` });
  const cwdText = entry.cwd === undefined || entry.cwd === null ? undefined : text(['cwd'], entry.cwd);
  const cwd = cwdText !== undefined && context.baseDir !== undefined ? resolve(context.baseDir, cwdText) : (cwdText ?? context.defaultCwd);
  const env = { ...readEnvFile(entry, at, text, context, problems), ...map('env') };
  if (problems.length > 0) return { problems };
  return {
    raw: { command, ...(args && { args }), ...(Object.keys(env).length > 0 && { env }), ...(cwd !== undefined && { cwd }) },
    problems,
  };
}

/** The transport an entry asks for: its `type`, else `command` → stdio, a `url` ending in `/sse` → sse, another `url` → http. */
function transportOf(entry: Record<string, unknown>, report: (message: string, hint?: string) => void): 'stdio' | 'http' | 'sse' | undefined {
  const type = entry.type;
  if (type !== undefined && type !== null) {
    if (typeof type === 'string' && Object.hasOwn(TYPES, type)) return TYPES[type];
    report(`unknown \`type\` ${describe(type)}`, 'runner speaks `stdio`, `http` (Streamable HTTP) and `sse` (legacy HTTP+SSE)');
    return undefined;
  }
  if (entry.command !== undefined) return 'stdio';
  if (typeof entry.url === 'string') return /\/sse\/?$/.test(pathOf(entry.url)) ? 'sse' : 'http';
  return undefined;
}

/** VS Code's `envFile`: variables from a .env file, under the entry's own `env`. */
function readEnvFile(
  entry: Record<string, unknown>,
  at: (sub: YamlPath) => SourceLocation,
  text: (sub: YamlPath, value: unknown) => string | undefined,
  context: EntryContext,
  problems: EntryProblem[],
): Record<string, string> {
  if (entry.envFile === undefined || entry.envFile === null) return {};
  const name = text(['envFile'], entry.envFile);
  if (name === undefined) return {};
  try {
    return parseDotenv(readFileSync(resolve(context.baseDir ?? context.fileDir, name), 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    problems.push({ location: at(['envFile']), message: `cannot read \`envFile\` ${name}: ${code === 'ENOENT' ? 'no such file' : (code ?? (error as Error).message)}` });
    return {};
  }
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.replace(/[?#].*$/, '');
  }
}

function formatKey(path: YamlPath): string {
  return path.map((segment, i) => (typeof segment === 'number' ? `[${segment}]` : i === 0 ? segment : `.${segment}`)).join('');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `\`${value}\``;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- lists and mappings returned above: only scalars reach String()
  return `${typeof value === 'number' ? 'the number' : 'the value'} \`${String(value)}\``;
}
