import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunnerError } from '../errors.js';

/** The loopback end of a login: where the browser is sent back to, and what it brought. */
export interface RedirectListener {
  /** `http://127.0.0.1:PORT/callback`. */
  redirectUrl: string;
  /** The query of the first redirect whose `state` matches. */
  received: Promise<URLSearchParams>;
  close(): Promise<void>;
}

const CALLBACK_PATH = '/callback';

/**
 * Listens on 127.0.0.1 (`port`, or a free one for 0) for the authorization
 * server's redirect. A request without the login's `state` is answered 400
 * and ignored: it is not this login's (a stale tab, or a forged request).
 */
export async function listenForRedirect(options: { port: number; state: string; app: string }): Promise<RedirectListener> {
  let deliver!: (params: URLSearchParams) => void;
  const received = new Promise<URLSearchParams>((resolve) => (deliver = resolve));
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || url.pathname !== CALLBACK_PATH) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (url.searchParams.get('state') !== options.state) {
      response.writeHead(400, { 'content-type': 'text/plain' }).end('this redirect does not belong to the login runner is waiting for');
      return;
    }
    const failed = url.searchParams.has('error') || !url.searchParams.has('code');
    const text = failed
      ? `runner did not get an authorization for app ${options.app}; see the terminal.`
      : `runner got the authorization for app ${options.app} and is finishing the login in the terminal. You can close this tab.`;
    response.writeHead(failed ? 400 : 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(`<!doctype html><meta charset="utf-8"><title>runner</title><p>${escapeHtml(text)}</p>\n`);
    deliver(url.searchParams);
  });
  await listen(server, options.port);
  const { port } = server.address() as AddressInfo;
  return {
    redirectUrl: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EADDRINUSE' ? `port ${port} is in use` : error.message;
      reject(new RunnerError('usage', `cannot receive the login redirect on 127.0.0.1:${port}: ${reason}`, { hint: 'free the port, or change `auth.redirect-port` (leave it out for any free port)', cause: error }));
    });
    server.listen(port, '127.0.0.1', () => resolve());
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[char]!);
}
