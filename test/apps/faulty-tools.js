// The faulty fixture server's tools and its one resource (see faulty.js for the list).
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  McpServer, ProtocolError, ProtocolErrorCode, inputRequired, inputResponse, isInputRequiredResult,
} from '@modelcontextprotocol/server';
import { errorResult, jsonResult } from '../../examples/apps/lib/tool-result.js';

const REPORT_URI = 'faulty://files/report.txt';
const REPORT_TEXT = 'report body';
// A valid 1x1 PNG.
const TINY_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const TINY_PDF = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITES = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const WRITES_IDEMPOTENT = { ...WRITES, idempotentHint: true };
const NAME_REQUEST = {
  type: 'object',
  properties: { name: { type: 'string', title: 'Your name' } },
  required: ['name'],
};

/** Calls of `concurrent` in flight in this process; a server in a test's process counts its own (`options.inFlight`). */
const processInFlight = { count: 0 };

const object = (properties = {}, required = []) => ({ type: 'object', properties, required, additionalProperties: false });
const DELAY = { type: 'integer', minimum: 0, description: 'Milliseconds to wait first' };
const GATE = { type: 'string', description: 'After the delay, wait until this file exists' };
const text = (value) => ({ content: [{ type: 'text', text: value }] });

/**
 * Waits `delayMs`, then until the file `gate` exists (checked every 10 ms): a call a test ends when it wants.
 * Once through, it leaves `<gate>.passed`, so the test knows the call is answering. A cancel ends the wait.
 */
async function hold({ delayMs = 0, gate }, signal) {
  if (delayMs > 0) await sleep(delayMs, undefined, { signal });
  if (!gate) return;
  while (!existsSync(gate)) await sleep(10, undefined, { signal });
  writeFileSync(`${gate}.passed`, '');
}

/**
 * The tool table: name → { description, annotations?, input (JSON Schema), run(args, ctx) }.
 * `options` holds the parsed flags: counterFile and stateDir are where side effects land.
 */
function defineTools({ counterFile, stateDir, exit: exitServer, inFlight = processInFlight }) {
  // What a crash does: the process exits (never returning); a server in a test's own process
  // (test/helpers/fixtures-in-memory.ts) closes its connection instead and never answers.
  const exit = () => {
    if (!exitServer) process.exit(1);
    exitServer();
    return new Promise(() => {});
  };
  const append = (line) => {
    if (!counterFile) throw new Error('this tool needs --counter FILE');
    appendFileSync(counterFile, `${line}\n`);
  };
  return {
    concurrent: {
      description: 'Count calls in flight in this process: append `start <epoch ms> <in flight>` to the counter, wait `delayMs` (and for `gate`).',
      annotations: READ_ONLY,
      input: object({ delayMs: DELAY, gate: GATE }),
      run: async ({ delayMs = 50, gate }, ctx) => {
        inFlight.count++;
        append(`start ${Date.now()} ${inFlight.count}`);
        try {
          await hold({ delayMs, gate }, ctx.mcpReq.signal);
        } finally {
          inFlight.count--;
        }
        return text('done');
      },
    },
    big: {
      description: 'Return a text block of `bytes` characters (`x`), for result size limits.',
      annotations: READ_ONLY,
      input: object({ bytes: { type: 'integer', minimum: 0 } }, ['bytes']),
      run: async ({ bytes }) => text('x'.repeat(bytes)),
    },
    bigImage: {
      description: 'Return one PNG-typed image block of `bytes` deterministic bytes (byte i is (i * 31 + 7) & 255), for large binary results.',
      annotations: READ_ONLY,
      input: object({ bytes: { type: 'integer', minimum: 0 } }, ['bytes']),
      run: async ({ bytes }) => ({ content: [{ type: 'image', data: deterministicBytes(bytes).toString('base64'), mimeType: 'image/png' }] }),
    },
    echo: {
      description: 'Return `text` after `delayMs` (0: at once).',
      annotations: READ_ONLY,
      input: object({ text: { type: 'string' }, delayMs: DELAY }),
      // The benchmarks' hot path: no I/O, no logging.
      run: async ({ text: value = '', delayMs = 0 }, ctx) => {
        if (delayMs > 0) await sleep(delayMs, undefined, { signal: ctx.mcpReq.signal });
        return { content: [{ type: 'text', text: value }], structuredContent: { text: value } };
      },
    },
    work: {
      description: 'Append `label` to the counter file, wait `delayMs` (and for `gate`), return the number of lines.',
      annotations: WRITES,
      input: object({ delayMs: DELAY, label: { type: 'string' }, gate: GATE }),
      run: async ({ delayMs = 0, label = 'work', gate }, ctx) => {
        append(label);
        await hold({ delayMs, gate }, ctx.mcpReq.signal);
        return jsonResult({ count: countLines(counterFile) });
      },
    },
    crash: {
      description: 'Exit the process mid-call after `delayMs`, optionally after appending `crash` to the counter file.',
      annotations: WRITES,
      input: object({ delayMs: DELAY, afterSideEffect: { type: 'boolean' } }),
      run: async ({ delayMs = 0, afterSideEffect = false }) => {
        if (afterSideEffect) append('crash');
        if (delayMs > 0) await sleep(delayMs);
        return exit();
      },
    },
    crash_once: {
      description: 'Exit mid-call unless <state>/crashed exists (creating it first); then answer {recovered: true}.',
      annotations: WRITES_IDEMPOTENT,
      input: object(),
      run: async () => {
        if (!stateDir) throw new Error('crash_once needs --state DIR');
        const marker = join(stateDir, 'crashed');
        if (existsSync(marker)) return jsonResult({ recovered: true });
        mkdirSync(stateDir, { recursive: true });
        writeFileSync(marker, `${process.pid}\n`);
        return exit();
      },
    },
    hang: {
      description: 'Never answer (the server stays responsive to other calls).',
      annotations: READ_ONLY,
      input: object(),
      // Settles only when the client cancels (notifications/cancelled), and notes that in the counter file if there is one.
      run: (_args, ctx) => new Promise((_resolve, reject) => {
        ctx.mcpReq.signal.addEventListener('abort', () => {
          if (counterFile) appendFileSync(counterFile, 'hang cancelled\n');
          reject(ctx.mcpReq.signal.reason);
        }, { once: true });
      }),
    },
    gate: {
      description: 'Answer once the file `path` exists (checked every 10 ms; then `<path>.passed` is left), or when the call is cancelled: a step that runs until a test lets it end.',
      annotations: READ_ONLY,
      input: object({ path: { type: 'string' } }, ['path']),
      run: async ({ path }, ctx) => {
        await hold({ gate: path }, ctx.mcpReq.signal);
        return text('open');
      },
    },
    slow: {
      description: 'Answer after `ms`; with `progressEveryMs`, send a progress notification that often.',
      annotations: READ_ONLY,
      input: object({ ms: { type: 'integer', minimum: 0 }, progressEveryMs: { type: 'integer', minimum: 1 } }, ['ms']),
      run: async ({ ms, progressEveryMs }, ctx) => {
        const progressToken = ctx.mcpReq._meta?.progressToken;
        const started = Date.now();
        const sending = new Set();
        const report = () => {
          const progress = Math.min(Date.now() - started, ms);
          const sent = ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: ms, message: `${progress} of ${ms} ms` } })
            .catch(() => {})
            .finally(() => sending.delete(sent));
          sending.add(sent);
        };
        const ticker = progressEveryMs && progressToken !== undefined ? setInterval(report, progressEveryMs) : undefined;
        try {
          await sleep(ms, undefined, { signal: ctx.mcpReq.signal });
        } finally {
          clearInterval(ticker);
          // A progress notification written after the response names a token the client has already dropped.
          await Promise.all(sending);
        }
        return jsonResult({ sleptMs: ms });
      },
    },
    fail: {
      description: 'Return a tool error (isError: true) carrying `message`.',
      annotations: READ_ONLY,
      input: object({ message: { type: 'string' } }),
      run: async ({ message = 'faulty: requested failure' }) => errorResult(message),
    },
    rpc_error: {
      description: 'Answer with a JSON-RPC error response with `code` (default -32603), not a tool result; `pad` adds that many characters to its message.',
      annotations: READ_ONLY,
      input: object({ code: { type: 'integer' }, pad: { type: 'integer' } }),
      run: async ({ code = ProtocolErrorCode.InternalError, pad = 0 }) => {
        throw new ProtocolError(code, `faulty: rpc error ${code}${pad > 0 ? ` ${'x'.repeat(pad)}` : ''}`, { requested: code });
      },
    },
    lie_delete: {
      description: 'Claims to be read-only but appends `deleted` to the counter file.',
      annotations: { readOnlyHint: true, openWorldHint: false },
      input: object(),
      run: async () => {
        append('deleted');
        return text('deleted');
      },
    },
    purge: {
      description: 'Destructive (honestly so): appends `purge <label>` to the counter file.',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      input: object({ label: { type: 'string' } }),
      run: async ({ label }) => {
        append(`purge ${label ?? ''}`.trim());
        return text(`purged ${label ?? ''}`.trim());
      },
    },
    no_annotations: {
      description: 'A tool without annotations: the spec defaults apply.',
      input: object(),
      run: async () => text('no annotations'),
    },
    ask_name: {
      description: 'Ask the user for a name (form elicitation); answer `hello <name>`, `declined` or `cancelled`.',
      annotations: { ...READ_ONLY, idempotentHint: false },
      input: object(),
      run: async (_args, ctx) => {
        const answer = inputResponse(ctx.mcpReq.inputResponses, 'name');
        if (answer.kind !== 'elicit') {
          return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: NAME_REQUEST }) } });
        }
        if (answer.action !== 'accept') return text(answer.action === 'decline' ? 'declined' : 'cancelled');
        return text(`hello ${answer.content?.name}`);
      },
    },
    ask_many: {
      description: 'Ask `count` questions at once (form elicitation), each message `question N` and `pad` more characters; answer each one\'s action.',
      annotations: READ_ONLY,
      input: object({ count: { type: 'integer' }, pad: { type: 'integer' } }),
      run: async ({ count = 2, pad = 0 }, ctx) => {
        const names = Array.from({ length: count }, (_, i) => `q${i + 1}`);
        const answers = names.map((name) => inputResponse(ctx.mcpReq.inputResponses, name));
        if (answers.some((answer) => answer.kind !== 'elicit')) {
          const ask = (name) => inputRequired.elicit({ message: `question ${name.slice(1)} ${'x'.repeat(pad)}`, requestedSchema: NAME_REQUEST });
          return inputRequired({ inputRequests: Object.fromEntries(names.map((name) => [name, ask(name)])) });
        }
        return text(answers.map((answer) => answer.action).join(' '));
      },
    },
    image: {
      description: 'Return an image block, a resource_link to faulty://files/report.txt and an embedded PDF blob.',
      annotations: READ_ONLY,
      input: object(),
      run: async () => ({
        content: [
          { type: 'image', data: TINY_PNG, mimeType: 'image/png' },
          { type: 'resource_link', uri: REPORT_URI, name: 'report.txt', mimeType: 'text/plain' },
          { type: 'resource', resource: { uri: 'faulty://files/report.pdf', mimeType: 'application/pdf', blob: TINY_PDF } },
        ],
      }),
    },
  };
}

/**
 * A fresh McpServer with the faulty tools and the report resource.
 * Tools are dispatched by our own `tools/call` handler on the low-level
 * server: McpServer turns every error a registered tool throws into an
 * `isError` result, and `rpc_error` must reach the client as a JSON-RPC error.
 * Arguments are not validated here; clients check them against `inputSchema`.
 * `options` are parseFaultyFlags's, and for a server in a test's own process:
 * `exit`, what `crash` and `crash_once` do instead of exiting the process, and
 * `inFlight` (`{ count: 0 }`), where `concurrent` counts the app's calls.
 */
export function createFaultyServer(options) {
  const server = new McpServer({ name: options.name, version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools = defineTools(options);
  const listed = Object.entries(tools).map(([name, tool]) => ({
    name,
    description: tool.description,
    inputSchema: tool.input,
    ...(tool.annotations && { annotations: tool.annotations }),
  }));

  server.server.setRequestHandler('tools/list', () => ({ tools: listed }));
  server.server.setRequestHandler('tools/call', async (request, ctx) => {
    const tool = tools[request.params.name];
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    let result;
    try {
      result = await tool.run(request.params.arguments ?? {}, ctx);
    } catch (error) {
      // Like McpServer: a tool's own failure is a tool result; only ProtocolError goes out as JSON-RPC.
      if (error instanceof ProtocolError) throw error;
      return errorResult(error instanceof Error ? error.message : String(error));
    }
    return isInputRequiredResult(result) ? result : server.server.projectCallToolResult(result);
  });

  server.registerResource('report', REPORT_URI, { title: 'Report', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: REPORT_TEXT }],
  }));
  return server;
}

/** `bytes` bytes where byte i is (i * 31 + 7) & 255: tests rebuild the same bytes to compare a saved file. */
export function deterministicBytes(bytes) {
  const data = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i++) data[i] = (i * 31 + 7) & 255;
  return data;
}

function countLines(file) {
  const body = readFileSync(file, 'utf8');
  return body === '' ? 0 : body.split('\n').length - 1;
}
