import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInProcess } from './in-process.js';
import { createWorkspace, type Workspace, faultyArgs } from './workspace.js';

export interface FaultyRun {
  ws: Workspace;
  code: number | null;
  stdout: string;
  stderr: string;
  record: any;
  step(id: string): any;
  /** Lines the app's side-effecting tools appended to the counter file. */
  sideEffects(): string[];
}

export interface FaultyOptions {
  /** Extra flags for the faulty app. */
  appFlags?: string[];
  /** Extra YAML under the `faulty:` app entry (indented by 4). */
  appYaml?: string;
  /** Extra top-level config YAML. */
  configYaml?: string;
  /** Extra CLI arguments after the workflow. */
  cliArgs?: string[];
  /** Workflow-level YAML before `steps:`. */
  workflowYaml?: string;
  /** Start the app as a process, as a user's runner would, instead of serving it in this process (fixturesInMemory). */
  process?: boolean;
}

/**
 * Runs a one-off workflow against the faulty app through the CLI, in this process; the app is
 * served in this process too (fixturesInMemory) unless `process` is set or its flags ask for a process.
 */
export async function runFaulty(steps: string, options: FaultyOptions = {}): Promise<FaultyRun> {
  const ws = createWorkspace('');
  const counter = join(ws.dir, 'counter.txt');
  const args = [...faultyArgs, '--counter', counter, '--state', join(ws.dir, 'state'), ...(options.appFlags ?? [])];
  ws.write(
    'runner.config.yaml',
    `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify(args)}\n${options.appYaml ?? ''}${options.configYaml ?? ''}`,
  );
  const workflow = ws.write('wf.yaml', `name: wf\n${options.workflowYaml ?? ''}steps:\n${steps}`);
  const result = await runInProcess(['--config', ws.config, 'run', workflow, '--json', ...(options.cliArgs ?? [])], {
    cwd: ws.dir,
    apps: options.process ? 'process' : undefined,
  });
  let record: any = null;
  try {
    record = JSON.parse(result.stdout);
  } catch {
    record = null;
  }
  return {
    ws,
    ...result,
    record,
    step: (id) => {
      // No record means the CLI printed none: say what it printed instead of failing on `undefined`.
      if (!record) throw new Error(`\`runner run --json\` exited ${result.code} (signal ${result.signal}) without a run record; stdout: ${result.stdout.slice(0, 500)}\nstderr: ${result.stderr.slice(0, 2000)}`);
      return record.steps.find((entry: { id: string }) => entry.id === id);
    },
    sideEffects: () => (existsSync(counter) ? readFileSync(counter, 'utf8').split('\n').filter(Boolean) : []),
  };
}

/**
 * A workspace whose one app, `faulty`, is the fixture app counting its side
 * effects in counter.txt, with the given files under workflows/ and
 * `configYaml` added to the config.
 */
export function faultyWorkspace(workflows: Record<string, string> = {}, configYaml = ''): Workspace & { counter: string; sideEffects(): string[] } {
  const ws = createWorkspace('');
  const counter = join(ws.dir, 'counter.txt');
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  faulty:\n    command: node\n    args: ${JSON.stringify([...faultyArgs, '--counter', counter])}\n${configYaml}`);
  for (const [name, text] of Object.entries(workflows)) ws.write(join('workflows', name), text);
  const sideEffects = () => (existsSync(counter) ? readFileSync(counter, 'utf8').split('\n').filter(Boolean) : []);
  return { ...ws, counter, sideEffects };
}
