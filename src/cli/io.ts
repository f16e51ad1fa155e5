import type { Readable } from 'node:stream';

/** What a command may touch of the process: injectable for tests. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdin: Readable & { isTTY?: boolean };
  /** Whether stderr is a terminal (live progress view, prompts). */
  stderrIsTTY: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** The real process's IO. */
export function processIO(): CliIO {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stdin: process.stdin,
    stderrIsTTY: Boolean(process.stderr.isTTY),
    cwd: process.cwd(),
    env: process.env,
  };
}

/** Global options every command shares. */
export interface GlobalOptions {
  config?: string;
  debug?: boolean;
}
