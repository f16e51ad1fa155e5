import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A real redis-server on a free loopback port, with its own temp folder. */
export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  /** Stops it (SIGTERM, then SIGKILL) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

/** A port the OS says is free right now. */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts redis-server without persistence unless `args` ask for it (e.g. `--appendonly yes`). */
export async function startRedisServer(options: { dir?: string; port?: number; args?: string[] } = {}): Promise<RedisServer> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'runner-redis-'));
  const port = options.port ?? (await findFreePort());
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...(options.args ?? ['--appendonly', 'no'])];
  const child = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // A test that times out, or a worker that ends before its afterAll, must not leave the server running.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  await waitForReady(child);
  return { url: `redis://127.0.0.1:${port}`, port, dir, stop: (signal) => stopChild(child, signal) };
}

function waitForReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.resume();
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)));
    child.once('error', reject);
  });
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    timer.unref();
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}
