import type { Tool } from '@modelcontextprotocol/client';
import type { AppRegistry } from '../../apps/registry.js';
import { BUILTIN_APP, BUILTIN_TOOLS } from '../../builtins/catalog.js';
import { hintFor } from '../../config/schema-diagnostics.js';
import type { RunnerConfig } from '../../config/types.js';
import { ExitCode, messageOf, RunnerError } from '../../errors.js';
import { decidePolicy, readToolHints, type PolicyDecision, type ToolHints } from '../../scheduler/policy.js';
import { maskSecretsDeep } from '../../secrets.js';
import { describeFields, sampleWith } from '../describe-tool.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { openCommandContext } from '../context.js';
import { jsonForOutput, safeForTerminal } from '../../terminal-text.js';

/** One tool as `runner tools` shows it. */
interface ToolEntry {
  name: string;
  title?: string;
  description?: string;
  annotations: NonNullable<Tool['annotations']>;
  hints: ToolHints;
  policy: PolicyDecision;
  inputSchema: Tool['inputSchema'];
  outputSchema: Tool['outputSchema'] | null;
}

/** One app's answer: its tools, or why it has none to show. */
type AppListing =
  | { app: string; builtin?: boolean; protocolVersion?: string; server?: { name: string; version: string }; tools: ToolEntry[] }
  | { app: string; error: string; tools: [] };

/** The decision for every built-in tool: they only read their inputs and write into their own step folder. */
const BUILTIN_POLICY: PolicyDecision = { action: 'allow', reason: 'built-in' };

/**
 * `runner tools [APP | APP.TOOL]`: every tool with its annotations and the
 * policy decision that applies, configured apps first, then the built-in
 * `runner` tools; with APP.TOOL, that tool's schemas and a sample `with:`.
 * Exit 1 when no app that was asked for answered.
 */
export async function toolsCommand(target: string | undefined, options: GlobalOptions & { json?: boolean }, io: CliIO): Promise<number> {
  const context = await openCommandContext(options, io);
  const { config } = context;
  const dot = target?.indexOf('.') ?? -1;
  const appName = dot > 0 ? target!.slice(0, dot) : target;
  if (appName !== undefined) checkAppName(appName, config);
  const names = appName === undefined ? Object.keys(config.apps) : appName === BUILTIN_APP ? [] : [appName];
  try {
    const listing: AppListing[] = await Promise.all(names.map((name) => listApp(name, context.apps(), config)));
    if (appName === undefined || appName === BUILTIN_APP) listing.push(listBuiltins());
    if (dot > 0) return printTool(listing[0], target!.slice(dot + 1), options, io, config);
    const print = <T>(value: T) => maskSecretsDeep(value, config.secretValues);
    if (options.json) io.stdout(jsonForOutput(print(listing)));
    // Tool and server names are the app's: what would steer a terminal is escaped.
    else io.stdout(safeForTerminal(print(formatListing(listing))));
    const asked = listing.filter((entry) => !('builtin' in entry && entry.builtin));
    return asked.length > 0 && asked.every((entry) => 'error' in entry) ? ExitCode.stepFailed : ExitCode.succeeded;
  } finally {
    await context.close();
  }
}

function checkAppName(name: string, config: RunnerConfig): void {
  if (name === BUILTIN_APP || Object.hasOwn(config.apps, name)) return;
  throw new RunnerError('usage', `no app named \`${name}\` in ${config.file ?? 'the config (no runner.config.yaml was found)'}`, {
    hint: hintFor(name, [...Object.keys(config.apps), BUILTIN_APP], 'apps'),
  });
}

/** Connects to one app and lists its tools; a failure becomes that app's entry, not the command's. */
async function listApp(name: string, apps: AppRegistry, config: RunnerConfig): Promise<AppListing> {
  try {
    const connection = await apps.get(name);
    const tools = await connection.listTools();
    return {
      app: name,
      protocolVersion: connection.info.protocolVersion,
      server: connection.info.server,
      tools: tools.map((tool) => toEntry(tool, decidePolicy(`${name}.${tool.name}`, readToolHints(tool), config.policy))),
    };
  } catch (error) {
    return { app: name, error: messageOf(error), tools: [] };
  }
}

function listBuiltins(): AppListing {
  return { app: BUILTIN_APP, builtin: true, tools: BUILTIN_TOOLS.map((tool) => toEntry(tool, BUILTIN_POLICY)) };
}

function toEntry(tool: Tool, policy: PolicyDecision): ToolEntry {
  return {
    name: tool.name,
    title: tool.title ?? tool.annotations?.title,
    description: tool.description,
    annotations: tool.annotations ?? {},
    hints: readToolHints(tool),
    policy,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema ?? null,
  };
}

function formatListing(listing: AppListing[]): string {
  let text = '';
  for (const entry of listing) {
    if ('error' in entry) {
      text += `${entry.app}: unavailable: ${entry.error}\n`;
      continue;
    }
    const about = entry.builtin ? 'built-in' : `${entry.server ? `${entry.server.name} ${entry.server.version}, ` : ''}protocol ${entry.protocolVersion ?? '?'}`;
    text += `${entry.app} (${about})\n`;
    for (const tool of entry.tools) {
      text += `  ${`${entry.app}.${tool.name}`.padEnd(28)} ${tool.policy.action.padEnd(5)}  ${describeHints(tool.hints).join(', ')}  (${tool.policy.reason})\n`;
    }
  }
  return text;
}

function describeHints(hints: ToolHints): string[] {
  return [
    hints.readOnly ? 'read-only' : hints.destructive ? 'destructive' : 'writes',
    hints.idempotent && !hints.readOnly ? 'idempotent' : '',
    hints.openWorld ? 'open-world' : '',
  ].filter(Boolean);
}

/** `runner tools APP.TOOL`: one tool in detail, or as JSON. */
function printTool(entry: AppListing, toolName: string, options: { json?: boolean }, io: CliIO, config: RunnerConfig): number {
  const mask = <T>(value: T) => maskSecretsDeep(value, config.secretValues);
  if ('error' in entry) {
    io.stderr(mask(`${entry.app}: unavailable: ${entry.error}\n`));
    return ExitCode.stepFailed;
  }
  const tool = entry.tools.find((candidate) => candidate.name === toolName);
  if (!tool) {
    throw new RunnerError('usage', `app \`${entry.app}\` has no tool \`${toolName}\``, {
      hint: hintFor(toolName, entry.tools.map((candidate) => candidate.name), `tools of ${entry.app}`),
    });
  }
  const uses = `${entry.app}.${tool.name}`;
  if (options.json) {
    io.stdout(jsonForOutput(mask({ app: entry.app, ...tool })));
    return ExitCode.succeeded;
  }
  const lines = [
    `${uses}${tool.title ? ` — ${tool.title}` : ''}`,
    ...(tool.description ? tool.description.split('\n').map((line) => `  ${line}`.trimEnd()) : []),
    `  ${describeHints(tool.hints).join(', ')}; policy: ${tool.policy.action} (${tool.policy.reason})`,
    '',
    'input:',
    ...describeFields(tool.inputSchema),
    '',
    tool.outputSchema ? 'output (structuredContent):' : 'output: no outputSchema (outputs is the JSON of a single text block, if it parses)',
    ...(tool.outputSchema ? describeFields(tool.outputSchema) : []),
    '',
    'sample step:',
    `  - id: ${stepIdFor(tool.name)}`,
    `    uses: ${uses}`,
    ...sampleWith(tool.inputSchema, '    '),
  ];
  io.stdout(safeForTerminal(mask(lines.join('\n') + '\n')));
  return ExitCode.succeeded;
}

/** A step id made of a tool name: `[A-Za-z_][A-Za-z0-9_-]*`, at most 64 characters, never the reserved `logs`. */
export function stepIdFor(toolName: string): string {
  let id = toolName.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  if (!/^[A-Za-z_]/.test(id)) id = `_${id}`.slice(0, 64);
  return id === 'logs' ? 'logs_' : id;
}
