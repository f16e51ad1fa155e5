import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createMcpHandler, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { onTestFinished } from 'vitest';
// A plain JS module, shared with the stdio fixture app.
import { createFaultyServer } from '../apps/faulty-tools.js';

// MCP servers over HTTP on loopback, in the test process, that misbehave on
// request: Streamable HTTP servers that answer the `server/discover` probe
// with HTTP 500, garbage or nothing (and speak the 2025 handshake fine), and
// a legacy HTTP+SSE server. Each records the JSON-RPC methods it received.

/** What a Streamable HTTP fixture does with `server/discover`. */
export type ProbeAnswer = 'serve' | 'http-500' | 'garbage' | 'silent';

export interface HttpFixture {
  /** The MCP endpoint (`/mcp`, or `/sse` for the legacy server). */
  url: string;
  /** Methods of the JSON-RPC requests and notifications received, in order. */
  methods: string[];
  close(): Promise<void>;
}

/** A Streamable HTTP server (both eras, the `faulty` fixture's tools) whose answer to the probe is `probe`. */
export async function startStreamableFixture(probe: ProbeAnswer): Promise<HttpFixture> {
  const handler = createMcpHandler(() => createFaultyServer({ name: 'fixture' }));
  const methods: string[] = [];
  const held: ServerResponse[] = [];
  return listen('/mcp', methods, async (req, res, url) => {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const method = body === undefined ? undefined : methodOf(body);
    if (method) methods.push(method);
    if (method === 'server/discover' && probe !== 'serve') {
      if (probe === 'http-500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error');
      if (probe === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>this is not JSON</html>');
      return void held.push(res); // silent: never answers
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const response = await handler.fetch(new Request(url, { method: req.method, headers, ...(body !== undefined && { body }) }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) Readable.fromWeb(response.body as never).pipe(res);
    else res.end();
  }, () => {
    for (const res of held) res.destroy();
    return handler.close();
  });
}

/**
 * A legacy HTTP+SSE server (2024-11-05 transport): GET /sse opens the event
 * stream and names the endpoint to POST messages to. The v2 server SDK has no
 * transport for it, so this is the minimal one, under the SDK's McpServer.
 */
export async function startLegacySseFixture(): Promise<HttpFixture> {
  const methods: string[] = [];
  const sessions = new Map<string, LegacySseServerTransport>();
  return listen('/sse', methods, async (req, res, url) => {
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new LegacySseServerTransport(res, `/messages?sessionId=${randomUUID()}`);
      sessions.set(transport.sessionId, transport);
      res.on('close', () => sessions.delete(transport.sessionId));
      await createFaultyServer({ name: 'legacy-sse' }).connect(transport);
      return;
    }
    const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
    if (req.method !== 'POST' || url.pathname !== '/messages' || !transport) return void res.writeHead(404).end('no such session');
    const body = await readBody(req);
    const method = methodOf(body);
    if (method) methods.push(method);
    res.writeHead(202).end('Accepted');
    transport.onmessage?.(JSON.parse(body) as JSONRPCMessage);
  }, async () => {
    for (const transport of sessions.values()) await transport.close();
  });
}

class LegacySseServerTransport implements Transport {
  readonly sessionId: string;
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(
    private readonly res: ServerResponse,
    private readonly endpoint: string,
  ) {
    this.sessionId = new URL(endpoint, 'http://x').searchParams.get('sessionId')!;
    res.on('close', () => this.onclose?.());
  }

  async start(): Promise<void> {
    this.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    this.res.write(`event: endpoint\ndata: ${this.endpoint}\n\n`);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  async close(): Promise<void> {
    this.res.end();
  }
}

async function listen(
  path: string,
  methods: string[],
  handle: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>,
  stop: () => Promise<void> | void,
): Promise<HttpFixture> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
    handle(req, res, url).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500).end(error.message);
      else res.destroy(error);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const fixture: HttpFixture = {
    url: `http://127.0.0.1:${port}${path}`,
    methods,
    close: () =>
      (closing ??= (async () => {
        await stop();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })()),
  };
  // Closed when the test that started it ends, whatever happened (registered per test, so it holds
  // when test files share one module graph and this module is loaded once).
  onTestFinished(() => fixture.close());
  return fixture;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function methodOf(body: string): string | undefined {
  try {
    const message = JSON.parse(body) as { method?: unknown };
    return typeof message.method === 'string' ? message.method : undefined;
  } catch {
    return undefined;
  }
}
