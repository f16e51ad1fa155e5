import { spawn, type ChildProcess } from 'node:child_process';
import { onTestFinished } from 'vitest';
import { cliPath, type Workspace } from './workspace.js';

// `runner serve|watch|cron` as a child process, observed through its --json events.

export type Event = Record<string, any> & { type: string };

export interface Serve {
  child: ChildProcess;
  events: Event[];
  stderr: () => string;
  /** Resolves once `predicate` holds for the events so far. */
  until(predicate: (events: Event[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `runner ARGS --json` in `ws`. A test that runs concurrently with others passes its own
 * context (`{ onTestFinished }` from the test's argument): vitest's global `onTestFinished` cannot
 * tell concurrent tests apart, and would kill this process when another test ends.
 */
export function startServe(ws: Workspace, args: string[], test: { onTestFinished: typeof onTestFinished } = { onTestFinished }, env: NodeJS.ProcessEnv = {}): Serve {
  const child = spawn(process.execPath, [cliPath, '--config', ws.config, ...args, '--json'], { cwd: ws.dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  // Killed when the test that started it ends, whatever happened (registered per test, so it holds
  // when test files share one module graph and this module is loaded once).
  test.onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const events: Event[] = [];
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (chunk) => {
    stdout += chunk;
    const lines = stdout.split('\n');
    stdout = lines.pop()!;
    for (const line of lines) if (line.trim()) events.push(JSON.parse(line));
    for (const wake of waiters) wake();
  });
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    events,
    stderr: () => stderr,
    until(predicate, what, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (predicate(events)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; stderr:\n${stderr}`));
        }, timeoutMs);
        waiters.add(check);
        void exited.then(() => check());
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      child.kill(signal);
      return exited;
    },
  };
}

