// Serve an MCP server factory over Streamable HTTP on loopback (both protocol eras).
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';

export const MCP_PATH = '/mcp';

/**
 * Listen on 127.0.0.1:port (0 picks a free port) and answer `/mcp` with
 * createMcpHandler (stateless legacy fallback on). Resolves with
 * { port, close() } once listening.
 */
export async function serveHttp(factory, { port, log }) {
  const handler = createMcpHandler(factory, { onerror: (error) => log(`mcp error: ${error.message}`) });
  const server = createServer((req, res) => {
    handleNodeRequest(handler, req, res).catch((error) => {
      log(`http error: ${error.message}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
      else res.destroy(error);
    });
  });
  await new Promise((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', rejectListen);
      resolveListen();
    });
  });
  const close = async () => {
    await handler.close();
    server.closeAllConnections();
    await new Promise((done) => server.close(() => done()));
  };
  return { port: server.address().port, close };
}

async function handleNodeRequest(handler, req, res) {
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
  if (url.pathname !== MCP_PATH) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found; the MCP endpoint is ${MCP_PATH}`);
    return;
  }
  // Aborts the exchange in the SDK when the client goes away mid-response.
  const disconnected = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) disconnected.abort();
  });
  const request = toWebRequest(req, url, disconnected.signal);
  // DNS-rebinding protection: the entry itself validates neither Host nor Origin.
  const response =
    hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
    originValidationResponse(request, localhostAllowedOrigins()) ??
    (await handler.fetch(request));
  await sendWebResponse(response, res);
}

function toWebRequest(req, url, signal) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(url, {
    method: req.method,
    headers,
    body: hasBody ? Readable.toWeb(req) : undefined,
    duplex: hasBody ? 'half' : undefined,
    signal,
  });
}

// Streams the body chunk by chunk, so SSE frames reach the client as they are written.
async function sendWebResponse(response, res) {
  const headers = {};
  response.headers.forEach((value, name) => {
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  });
  // An empty statusText would blank the reason phrase; let Node supply the standard one.
  if (response.statusText) res.writeHead(response.status, response.statusText, headers);
  else res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  res.flushHeaders();
  try {
    await pipeline(Readable.fromWeb(response.body), res);
  } catch (error) {
    // A client that hangs up mid-stream is normal for SSE; anything else is worth a log line.
    if (error.code !== 'ERR_STREAM_PREMATURE_CLOSE' && error.name !== 'AbortError') throw error;
  }
}
