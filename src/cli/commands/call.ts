import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/client';
import type { AppRegistry } from '../../apps/registry.js';
import { createRunId } from '../../artifacts/run-id.js';
import { BUILTIN_APP, BUILTIN_TOOLS } from '../../builtins/catalog.js';
import { hintFor } from '../../config/schema-diagnostics.js';
import type { RunnerConfig } from '../../config/types.js';
import { RunnerError, throwOnDiagnostics, type Diagnostic } from '../../errors.js';
import { runLoaded } from '../../runner.js';
import type { PolicyOverrides } from '../../scheduler/events.js';
import { checkToolArguments } from '../../scheduler/validate-args.js';
import { maskRunRecord, maskSecrets, maskSecretsDeep } from '../../secrets.js';
import { readValueFiles } from '../../workflow/inputs.js';
import type { Workflow } from '../../workflow/types.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { openCommandContext } from '../context.js';
import { buildToolArguments } from '../tool-arguments.js';
import { executeInTerminal, exitCodeOfRun } from './run.js';
import { stepIdFor } from './tools.js';
import { jsonForOutput } from '../../terminal-text.js';

/** The name of the one-step workflow every `runner call` runs: its runs are under `<artifacts>/call/`. */
export const CALL_WORKFLOW = 'call';

export interface CallCommandOptions extends GlobalOptions {
  json?: boolean;
  yes?: boolean;
  allow: string[];
}

/**
 * `runner call APP.TOOL [k=v]...`: one call as a one-step workflow, under the
 * same policy, limits and artifacts rules as any run, recorded like one. The
 * arguments are typed by the tool's inputSchema and checked against it
 * before anything runs (exit 2 naming the argument). Prints the result's text
 * (or its outputs as JSON) on stdout; `--json` the run record.
 */
export async function callCommand(target: string, pairs: string[], options: CallCommandOptions, io: CliIO): Promise<number> {
  const dot = target.indexOf('.');
  if (dot <= 0 || dot === target.length - 1) {
    throw new RunnerError('usage', `\`${target}\`: expected APP.TOOL`, { hint: 'e.g. `runner call image.info path=logo.png`; `runner tools` lists the tools' });
  }
  const app = target.slice(0, dot);
  const toolName = target.slice(dot + 1);
  const context = await openCommandContext(options, io);
  const { config } = context;
  if (app !== BUILTIN_APP && !Object.hasOwn(config.apps, app)) {
    throw new RunnerError('usage', `no app named \`${app}\` in ${config.file ?? 'the config (no runner.config.yaml was found)'}`, {
      hint: hintFor(app, [...Object.keys(config.apps), BUILTIN_APP], 'apps'),
    });
  }
  const given = await readValueFiles(pairs, io.cwd, '');
  const runId = createRunId(context.clock.now());
  const runDir = join(config.artifacts, CALL_WORKFLOW, runId);
  const apps = context.apps(join(runDir, 'logs'));
  let started = false;
  try {
    const tool = await findTool(app, toolName, apps);
    const diagnostics: Diagnostic[] = [];
    const args = buildToolArguments(given, tool?.inputSchema, diagnostics);
    throwOnDiagnostics('inputs', diagnostics);
    if (tool) throwOnDiagnostics('inputs', checkToolArguments(tool, args).map((problem) => diagnoseArgument(target, problem, tool)));

    const policy: PolicyOverrides = { yes: Boolean(options.yes), allow: options.allow };
    // A call has no workflow file to resume, so an ask nobody can answer here is denied, never left waiting.
    const callConfig: RunnerConfig = { ...config, policy: { ...config.policy, headlessAsk: 'deny' } };
    started = true;
    const { record, secretValues } = await executeInTerminal(
      io,
      policy,
      (hooks) => runLoaded({ config: callConfig, workflow: callWorkflow(app, toolName, args, config), inputs: args, apps, runId, policy, env: io.env, ...hooks }),
      { warned: true },
    );
    const step = record.steps[0];
    if (options.json) {
      io.stdout(jsonForOutput(maskRunRecord(record, secretValues)));
    } else if (step.status === 'succeeded') {
      const text = typeof step.text === 'string' ? step.text : '';
      if (text !== '') io.stdout(maskSecrets(text.endsWith('\n') ? text : `${text}\n`, secretValues));
      else if (step.outputs !== null && step.outputs !== undefined) io.stdout(jsonForOutput(maskSecretsDeep(step.outputs, secretValues)));
      for (const file of step.files ?? []) io.stderr(`saved ${file}\n`);
    }
    return exitCodeOfRun(record);
  } finally {
    await context.close();
    // Nothing ran: the app's log of the tool listing is all the folder holds, and no record points to it.
    if (!started) await rm(runDir, { recursive: true, force: true });
  }
}

/**
 * The tool to call, from the built-in catalog or the app's tool list. Unknown
 * tool: exit 2 with "did you mean". An app that cannot be reached: undefined,
 * and the run records that failure as it would in a workflow.
 */
async function findTool(app: string, name: string, apps: AppRegistry): Promise<Tool | undefined> {
  let tools: readonly Tool[] = BUILTIN_TOOLS;
  if (app !== BUILTIN_APP) {
    try {
      tools = await (await apps.get(app)).listTools();
    } catch {
      return undefined;
    }
  }
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) {
    throw new RunnerError('usage', `app \`${app}\` has no tool \`${name}\``, { hint: hintFor(name, tools.map((candidate) => candidate.name), `tools of ${app}`) });
  }
  return tool;
}

/** A problem with the arguments, with "did you mean" for an unknown one. */
function diagnoseArgument(target: string, problem: string, tool: Tool): Diagnostic {
  const unknown = /^unknown argument `([^`]+)`$/.exec(problem)?.[1];
  const known = Object.keys((tool.inputSchema as { properties?: object }).properties ?? {});
  return { message: `${target}: ${problem}`, ...(unknown !== undefined && { hint: hintFor(unknown, known, 'its arguments') }) };
}

/**
 * The one-step workflow of a call. Each argument reaches the tool through
 * `${{ inputs['name'] }}`, never written into `with` itself, so a value that
 * happens to contain `${{` is passed as it is, not evaluated.
 */
function callWorkflow(app: string, tool: string, args: Record<string, unknown>, config: RunnerConfig): Workflow {
  const location = { file: config.file ?? config.dir, line: 1, col: 1 };
  const withValue = Object.fromEntries(Object.keys(args).map((name) => [name, `\${{ inputs['${name.replaceAll("'", "''")}'] }}`]));
  return {
    file: '',
    name: CALL_WORKFLOW,
    on: { schedule: [] },
    inputs: {},
    defaults: {},
    steps: [{ id: stepIdFor(tool), uses: `${app}.${tool}`, app, tool, with: withValue, needs: [], continueOnError: false, location }],
    location,
  };
}
