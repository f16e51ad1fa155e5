import { BUILTIN_APP } from '../builtins/catalog.js';
import type { Diagnostic } from '../errors.js';
import type { AppDeclaration } from './normalize.js';
import type { FromSchema, RawApp } from './schema.js';
import { diagnoseSchemaErrors, validateAgainst, type PathNames } from './schema-diagnostics.js';
import { locatePath, parseJsonSource, readSourceFile } from './yaml-source.js';

// Reads apps from files in the common `mcpServers` format (.mcp.json,
// claude_desktop_config.json). Those files belong to other tools, which put
// their own keys in them, so unknown keys are ignored here (unlike in our own
// files); only the keys runner uses are checked.

const serverSchema = {
  type: 'object',
  errorMessage: 'a server with `command` (stdio) or `url` (Streamable HTTP)',
  anyOf: [{ required: ['command'] }, { required: ['url'] }],
  properties: {
    type: {
      type: 'string',
      enum: ['stdio', 'http', 'streamable-http'],
      errorMessage: '`stdio`, `http` or `streamable-http` (runner does not speak the legacy SSE transport)',
    },
    command: { type: 'string', minLength: 1 },
    args: { type: 'array', items: { type: 'string' } },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    cwd: { type: 'string' },
    url: { type: 'string', minLength: 1 },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

const mcpServersFileSchema = {
  type: 'object',
  required: ['mcpServers'],
  properties: {
    mcpServers: {
      type: 'object',
      propertyNames: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', errorMessage: 'an app name of letters, digits, `_` and `-`' },
      additionalProperties: serverSchema,
    },
  },
} as const;

type RawServer = FromSchema<typeof serverSchema>;

const IMPORT_NAMES: PathNames = {
  root: 'the file',
  owner: (path) => (path[0] === 'mcpServers' && path.length >= 2 ? { label: `server \`${String(path[1])}\``, length: 2 } : undefined),
};

/**
 * Reads the apps of one mcpServers JSON file. Servers named in `skip` (apps
 * the config declares itself, which win) are not checked at all. A server
 * named `runner` is skipped with a warning: that name belongs to the built-in
 * tools, and the file is another tool's, which the user may not want to edit.
 */
export async function readMcpServersFile(
  file: string,
  shownAs: string,
  skip: ReadonlySet<string>,
  diagnostics: Diagnostic[],
  warnings: Diagnostic[] = [],
): Promise<AppDeclaration[]> {
  const text = await readSourceFile(file, shownAs, diagnostics);
  if (text === undefined) return [];
  const problems: Diagnostic[] = [];
  const { source, data } = parseJsonSource(text, shownAs, problems);
  if (problems.length > 0) {
    diagnostics.push(...problems);
    return [];
  }
  const errors = validateAgainst(mcpServersFileSchema, data).filter((error) => {
    const name = /^\/mcpServers\/([^/]+)/.exec(error.instancePath)?.[1];
    const decoded = name?.replace(/~1/g, '/').replace(/~0/g, '~');
    return decoded === undefined || (!skip.has(decoded) && decoded !== BUILTIN_APP);
  });
  diagnostics.push(...diagnoseSchemaErrors(errors, source, data, IMPORT_NAMES));
  if (errors.length > 0) return [];

  const declarations: AppDeclaration[] = [];
  const servers = (data as { mcpServers: Record<string, RawServer> }).mcpServers;
  for (const [name, server] of Object.entries(servers)) {
    if (skip.has(name)) continue;
    if (name === BUILTIN_APP) {
      warnings.push({
        location: locatePath(source, ['mcpServers', name], 'key'),
        message: `server \`${name}\` is not imported: \`${BUILTIN_APP}\` is the name of runner's built-in tools`,
        hint: `to use this server, declare it under another name in apps: of runner.config.yaml`,
      });
      continue;
    }
    const path = ['mcpServers', name];
    const http = server.type === 'http' || server.type === 'streamable-http' || (server.type === undefined && server.command === undefined);
    const missing = http ? (server.url === undefined ? 'url' : undefined) : server.command === undefined ? 'command' : undefined;
    if (missing) {
      diagnostics.push({ location: locatePath(source, path, 'key'), message: `server \`${name}\` has \`type: ${server.type}\` but no \`${missing}\`` });
      continue;
    }
    declarations.push({ name, raw: toRawApp(server, http), source, path, names: IMPORT_NAMES });
  }
  return declarations;
}

/** Keeps the keys runner knows; `type` (or a `url` without `command`) picked the transport. */
function toRawApp(server: RawServer, http: boolean): RawApp {
  if (http) return { url: server.url, ...(server.headers && { headers: server.headers }) };
  return {
    command: server.command,
    ...(server.args && { args: server.args }),
    ...(server.env && { env: server.env }),
    ...(server.cwd !== undefined && { cwd: server.cwd }),
  };
}
