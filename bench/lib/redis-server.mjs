// A real redis-server for the queue-mode bench, on a free loopback port with
// its own temp folder (the bench's twin of test/helpers/redis-server.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanUpAtExit } from './cleanup.mjs';

const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

/** A port the OS says is free right now. */
function findFreePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts redis-server with the persistence docs/run-store-redis.md asks for
 * (`appendonly yes`, `appendfsync always`), so the figures include its fsyncs.
 * `stop()` ends it and removes its folder.
 */
export async function startRedisServer({ args = ['--appendonly', 'yes', '--appendfsync', 'always'] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'runner-bench-redis-'));
  const port = await findFreePort();
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  // If the bench is interrupted: the server is killed and its folder removed (stop() does it gracefully).
  const forget = cleanUpAtExit(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  await new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk) => {
      output += chunk;
      if (!output.includes('Ready to accept connections')) return;
      child.stdout.off('data', onData);
      child.stdout.resume();
      resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.resume();
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)));
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise((resolve) => {
          const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
          child.once('exit', () => (clearTimeout(timer), resolve()));
          child.kill('SIGTERM');
        });
      }
      forget();
    },
  };
}
