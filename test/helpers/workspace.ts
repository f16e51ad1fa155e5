import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const cliPath = join(repoRoot, 'dist', 'cli', 'main.js');
export const imageApp = join(repoRoot, 'examples', 'apps', 'image', 'server.js');
export const sheetApp = join(repoRoot, 'examples', 'apps', 'sheet', 'server.js');
export const faultyApp = join(repoRoot, 'test', 'apps', 'faulty.js');
export const shiftingApp = join(repoRoot, 'test', 'apps', 'shifting.js');

/** A fixture server test/global-setup.ts builds a startup snapshot of, and the variable that says where it is. */
export interface FixtureSnapshot {
  name: 'faulty' | 'shifting' | 'demo';
  env: string;
}
export const FIXTURE_SNAPSHOTS: readonly FixtureSnapshot[] = [
  { name: 'faulty', env: 'RUNNER_TEST_FAULTY_BLOB' },
  { name: 'shifting', env: 'RUNNER_TEST_SHIFTING_BLOB' },
  { name: 'demo', env: 'RUNNER_TEST_DEMO_BLOB' },
];

/** The arguments of `node` that start fixture `name`: from its startup snapshot when test/global-setup.ts built one (the same server, in a third of the CPU). */
function fixtureArgs(name: FixtureSnapshot['name'], script: string): readonly string[] {
  const blob = process.env[FIXTURE_SNAPSHOTS.find((fixture) => fixture.name === name)!.env];
  return blob ? ['--snapshot-blob', blob, script] : [script];
}

/** `node` arguments that start the faulty app, before its flags. */
export const faultyArgs = fixtureArgs('faulty', faultyApp);
/** `node` arguments that start the shifting app, before its files. */
export const shiftingArgs = fixtureArgs('shifting', shiftingApp);
/** `node` arguments that start the demo image app, before its flags (from the snapshot both demo apps share). */
export const imageAppArgs = fixtureArgs('demo', imageApp);
/** `node` arguments that start the demo sheet app, before its flags. */
export const sheetAppArgs = fixtureArgs('demo', sheetApp);

export const everythingApp = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** A temp folder with a runner.config.yaml, for one test. */
export interface Workspace {
  dir: string;
  artifacts: string;
  config: string;
  /** Writes a file relative to the workspace and returns its absolute path. */
  write(relative: string, text: string): string;
}

/** Creates a workspace whose config has the given YAML body (artifacts: artifacts is added). */
export function createWorkspace(configBody: string): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'runner-test-'));
  const write = (relative: string, text: string) => {
    const file = join(dir, relative);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  const config = write('runner.config.yaml', `artifacts: artifacts\n${configBody}`);
  return { dir, artifacts: join(dir, 'artifacts'), config, write };
}

/** YAML for the two demo apps, launched from this checkout. */
export function demoAppsYaml(): string {
  return `apps:\n  image:\n    command: node\n    args: ${JSON.stringify(imageAppArgs)}\n  sheet:\n    command: node\n    args: ${JSON.stringify(sheetAppArgs)}\n`;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI (`node dist/cli/main.js ...`) to completion. */
export function runCli(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 25_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}
