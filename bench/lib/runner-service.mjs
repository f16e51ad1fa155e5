// `runner watch` / `serve` with `--json` as a process that runs until stopped,
// for the soak and (j): its events as they come, waits on them, and a stop.
import { spawn } from 'node:child_process';
import { cliPath } from './workspace.mjs';

/**
 * Starts `runner ARGS...` (ARGS ending in `--json`) in `cwd` and resolves
 * once it says it is ready. `until(test, what, timeoutMs)` resolves once
 * `test(events)` holds and rejects when the process ends first or the time
 * runs out; `stop()` sends SIGTERM and resolves with the exit code.
 */
export async function startRunnerService(args, { cwd, readyTimeoutMs = 30_000 }) {
  const child = spawn(process.execPath, [cliPath, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const events = [];
  const waiters = new Set();
  let pending = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop();
    for (const line of lines) if (line.trim()) events.push(JSON.parse(line));
    for (const check of waiters) check();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise((resolve) => child.once('close', (code) => resolve(code)));
  const name = `runner ${args[0]}`;
  const until = (test, what, timeoutMs) =>
    new Promise((resolve, reject) => {
      const check = () => test(events) && finish();
      const finish = (error) => {
        clearTimeout(timer);
        waiters.delete(check);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(() => finish(new Error(`${name}: no ${what} within ${timeoutMs} ms:\n${stderr}`)), timeoutMs);
      waiters.add(check);
      exited.then((code) => finish(new Error(`${name} exited (${code}) before ${what}:\n${stderr}`)));
      check();
    });
  try {
    await until((seen) => seen.some((event) => event.type === 'ready'), 'ready event', readyTimeoutMs);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    child,
    events,
    until,
    stderr: () => stderr,
    /** SIGTERM, then the exit code once the process has ended. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
