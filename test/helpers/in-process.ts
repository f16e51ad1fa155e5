import { Readable } from 'node:stream';
// The built CLI, as `node dist/cli/main.js` runs it: its worker threads (runner.transform) and
// the orphan reaper are started from files next to it, which the TypeScript sources do not have.
import { runCli as runProgram } from '../../dist/cli/program.js';
import type { InProcessApps } from '../../dist/apps/in-process-apps.js';
import { fixturesInMemory } from './fixtures-in-memory.js';
import type { CliResult } from './workspace.js';

// The CLI without a process: `runCli(argv, io)` from src/cli/program.ts with stdout and stderr
// captured, the given cwd and env, and an empty, non-TTY stdin. A spawned `node dist/cli/main.js`
// costs a Node start and a module load per call (0.3–0.6 s on a loaded machine); this costs neither.
// Use it for what the executor, the loaders and the commands decide (exit code, output, files);
// keep the real process (runCli in workspace.ts) for signals, process groups, what reaches the
// real stdout/stderr, and exit codes as the shell sees them.

/** Runs `runner ARGS` in this process to completion, as `runCli` in workspace.ts runs it in a child. */
export async function runInProcess(
  args: string[],
  options: {
    cwd: string;
    env?: NodeJS.ProcessEnv;
    /** Sees stderr as it is written, all of it so far. */
    onStderr?: (stderr: string) => void;
    /**
     * How apps are reached: by default the faulty and shifting apps are served in this process (fixturesInMemory) and
     * every other app starts as configured; `'process'` starts every app as configured.
     */
    apps?: 'process' | InProcessApps;
    /** Whether the command is told stdout is a terminal (default: not). */
    stdoutIsTTY?: boolean;
  },
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runProgram(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => {
      stderr += text;
      options.onStderr?.(stderr);
    },
    stdin: Readable.from([]),
    stderrIsTTY: false,
    stdoutIsTTY: options.stdoutIsTTY ?? false,
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    inProcessApps: options.apps === 'process' ? undefined : (options.apps ?? fixturesInMemory()),
  });
  return { code, signal: null, stdout, stderr };
}
