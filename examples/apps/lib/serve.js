// Entry point shared by the demo apps: parse flags, then serve over stdio or HTTP.
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { parseAppArgs } from './args.js';
import { prepareRoot } from './paths.js';

/**
 * Run an app: `createServer({ root })` must return a fresh McpServer each
 * call (one per stdio connection or probe, one per HTTP request). stdout
 * carries protocol only; every log line goes to stderr.
 */
export async function runApp({ name, createServer }) {
  const log = (line) => process.stderr.write(`[${name}] ${line}\n`);
  let options;
  let root;
  try {
    options = parseAppArgs();
    root = prepareRoot(options.root);
  } catch (error) {
    log(error.message);
    process.exitCode = 2;
    return;
  }
  const factory = () => createServer({ root });

  if (options.httpPort === undefined) {
    const handle = serveStdio(factory, { onerror: (error) => log(`stdio error: ${error.message}`) });
    const stop = callOnce(() => handle.close().finally(() => process.exit(0)));
    // The stdio binding says a server exits when its stdin ends; don't rely on idle handles for it.
    process.stdin.once('end', stop);
    process.stdin.once('close', stop);
    onSignals(stop);
    return;
  }

  // Loaded only for HTTP: a stdio app never loads node:http or the HTTP handler.
  const { serveHttp } = await import('./serve-http.js');
  let http;
  try {
    http = await serveHttp(factory, { port: options.httpPort, log });
  } catch (error) {
    log(`cannot listen on 127.0.0.1:${options.httpPort}: ${error.message}`);
    process.exitCode = 1;
    return;
  }
  // Tests and scripts parse this exact line.
  process.stderr.write(`listening on http://127.0.0.1:${http.port}/mcp\n`);
  onSignals(callOnce(() => http.close().finally(() => process.exit(0))));
}

function onSignals(stop) {
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

function callOnce(fn) {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    fn();
  };
}
