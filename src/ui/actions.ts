import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CLI this UI belongs to: actions run it as their own process, so a run outlives the UI. */
const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));

/** How long an action waits for its run to announce itself before answering without an id. */
const ANNOUNCE_WAIT_MS = 20_000;

export interface ActionProcess {
  /** The run's id, from the line the run prints when it starts. */
  runId?: string;
  pid?: number;
  /** Where the process's output goes: `<artifacts>/.runner/ui/<time>-<action>.log`. */
  log: string;
  /** Set when it ended before announcing a run. */
  exitCode?: number | null;
}

/**
 * Starts `runner ARGS` detached (the run goes on if the UI stops), its
 * output in a log file, and resolves once the run has printed its id (or
 * the process ended, or ANNOUNCE_WAIT_MS passed).
 */
export function startCliAction(args: string[], options: { cwd: string; configPath?: string; artifacts: string; name: string }): Promise<ActionProcess> {
  const folder = join(options.artifacts, '.runner', 'ui');
  mkdirSync(folder, { recursive: true });
  const log = join(folder, `${new Date().toISOString().replaceAll(':', '-')}-${options.name}.log`);
  const fd = openSync(log, 'a', 0o600);
  // Both streams to the file, none to this process: the run must not depend on the UI staying up.
  const child = spawn(process.execPath, [CLI, ...(options.configPath ? ['--config', options.configPath] : []), ...args], {
    cwd: options.cwd,
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  child.unref();
  return new Promise((resolve) => {
    let exitCode: number | null | undefined;
    child.once('error', () => (exitCode = null));
    child.once('exit', (code) => (exitCode = code));
    const started = Date.now();
    const look = async () => {
      const text = await readFile(log, 'utf8').catch(() => '');
      const announced = /^run (\S+) /m.exec(text);
      if (announced) return resolve({ runId: announced[1], pid: child.pid, log });
      if (exitCode !== undefined) return resolve({ exitCode, pid: child.pid, log });
      if (Date.now() - started > ANNOUNCE_WAIT_MS) return resolve({ pid: child.pid, log });
      setTimeout(() => void look(), 100);
    };
    void look();
  });
}
