import type { CallToolResult } from '@modelcontextprotocol/client';
import { CallError } from '../apps/call-error.js';
import { checkSaveName, chooseFormat, renderContent, saveNamedFile, type SaveFormat } from './save-file.js';
import { TransformError, TransformPool } from './transform-pool.js';
import { messageOf } from '../errors.js';

let pool: TransformPool | undefined;

/** What a built-in call needs from its step. */
export interface BuiltinCall {
  tool: string;
  args: Record<string, unknown>;
  /** The step's (or foreach item's) folder: where `runner.save` writes. */
  callDir: string;
  signal: AbortSignal;
  /** The largest result a step may hold (the same bound as an app's `max-result`). */
  maxResultBytes: number;
}

/**
 * Runs a built-in tool. Returns the result as an MCP tool result (so result.json,
 * `outputs` and `text` work as for any app) and the files it wrote. Failures
 * of the workflow's own making (a JSONata error, a bad file name) are `input`.
 */
export async function runBuiltin(call: BuiltinCall): Promise<{ result: CallToolResult; files: string[] }> {
  switch (call.tool) {
    case 'transform':
      return { result: await transform(call), files: [] };
    case 'save':
      return save(call);
    default:
      throw new CallError('unavailable', `runner has no built-in tool \`${call.tool}\``, { outcome: 'not-sent' });
  }
}

async function transform({ args, signal, maxResultBytes }: BuiltinCall): Promise<CallToolResult> {
  const expression = String(args.expression);
  let json: string;
  try {
    json = await (pool ??= new TransformPool()).evaluate(expression, args.input ?? null, { signal, maxResultBytes });
  } catch (error) {
    if (!(error instanceof TransformError)) throw error;
    const at = error.position === undefined ? '' : ` at character ${error.position}`;
    throw new CallError('input', `runner.transform: ${error.message}${at} in \`${expression}\``, { outcome: 'not-sent' });
  }
  const value: unknown = JSON.parse(json);
  return { content: [{ type: 'text', text: json }], structuredContent: value as Record<string, unknown> };
}

function save({ args, callDir }: BuiltinCall): { result: CallToolResult; files: string[] } {
  const name = String(args.name);
  const problem = checkSaveName(name);
  if (problem) throw new CallError('input', `runner.save: \`name\` ${JSON.stringify(name)}: ${problem}`, { outcome: 'not-sent' });
  let text: string;
  try {
    text = renderContent(args.content, chooseFormat(name, args.content, args.format as SaveFormat | undefined));
  } catch (error) {
    throw new CallError('input', `runner.save: ${messageOf(error)}`, { outcome: 'not-sent' });
  }
  const saved = saveNamedFile(callDir, name, text);
  return { result: { content: [{ type: 'text', text: saved.path }], structuredContent: saved }, files: [saved.path] };
}
