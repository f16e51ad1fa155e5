// Serves a bench app on stdio until its stdin ends or it is told to stop,
// as the stdio binding asks of a server: the shared tail of the bench apps.
import { serveStdio } from '@modelcontextprotocol/server/stdio';

/** Serves `createServer` on stdio; exits 0 when stdin ends or on SIGTERM/SIGINT. */
export function serveUntilClosed(name, createServer) {
  const handle = serveStdio(createServer, { onerror: (error) => process.stderr.write(`${name}: stdio error: ${error.message}\n`) });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    handle.close().finally(() => process.exit(0));
  };
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
