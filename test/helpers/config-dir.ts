import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatDiagnostic, RunnerError, type RunnerErrorCode } from '../../src/errors.js';

/** A temp folder holding `files` (relative path → text), for config loading tests. */
export async function makeConfigDir(files: Record<string, string> = {}, prefix = 'runner-config-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

/** The formatted diagnostics of the RunnerError a promise rejects with (of `code`, when given); throws if it resolves or rejects otherwise. */
export async function problemsOf(promise: Promise<unknown>, code?: RunnerErrorCode): Promise<string[]> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof RunnerError)) throw new Error(`expected a RunnerError, got ${String(error)}`);
  if (code !== undefined && error.code !== code) throw new Error(`expected a RunnerError of code ${code}, got ${error.code}: ${error.message}`);
  return error.diagnostics.map(formatDiagnostic);
}
