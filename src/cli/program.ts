import { Command, CommanderError, Option } from 'commander';
import { ExitCode } from '../errors.js';
import type { ServeMode } from './commands/serve.js';
import type { CliIO, GlobalOptions } from './io.js';
import { reportError } from './report-error.js';
import { QUEUE_URL_ENV } from '../config/queue-url.js';

const collect = (value: string, previous: string[]) => [...previous, value];

// Each command's module is loaded only when it runs: `runner run` need not
// load chokidar and croner, and start-up time is most of a short run.
const runCommand: typeof import('./commands/run.js').runCommand = async (...args) => (await import('./commands/run.js')).runCommand(...args);
const runsCommand: typeof import('./commands/runs.js').runsCommand = async (...args) => (await import('./commands/runs.js')).runsCommand(...args);
const showRunCommand: typeof import('./commands/runs.js').showRunCommand = async (...args) => (await import('./commands/runs.js')).showRunCommand(...args);
const pruneCommand: typeof import('./commands/runs.js').pruneCommand = async (...args) => (await import('./commands/runs.js')).pruneCommand(...args);
const logsCommand: typeof import('./commands/logs.js').logsCommand = async (...args) => (await import('./commands/logs.js')).logsCommand(...args);
const reportCommand: typeof import('./commands/report.js').reportCommand = async (...args) => (await import('./commands/report.js')).reportCommand(...args);
const serveCommand: typeof import('./commands/serve.js').serveCommand = async (...args) => (await import('./commands/serve.js')).serveCommand(...args);
const toolsCommand: typeof import('./commands/tools.js').toolsCommand = async (...args) => (await import('./commands/tools.js')).toolsCommand(...args);
const callCommand: typeof import('./commands/call.js').callCommand = async (...args) => (await import('./commands/call.js')).callCommand(...args);
const initCommand: typeof import('./commands/init.js').initCommand = async (...args) => (await import('./commands/init.js')).initCommand(...args);
const validateCommand: typeof import('./commands/validate.js').validateCommand = async (...args) => (await import('./commands/validate.js')).validateCommand(...args);
const checkCommand: typeof import('./commands/check.js').checkCommand = async (...args) => (await import('./commands/check.js')).checkCommand(...args);
const uiCommand: typeof import('./commands/ui.js').uiCommand = async (...args) => (await import('./commands/ui.js')).uiCommand(...args);
const lockCommand: typeof import('./commands/lock.js').lockCommand = async (...args) => (await import('./commands/lock.js')).lockCommand(...args);
const answerCommand: typeof import('./commands/approve.js').answerCommand = async (...args) => (await import('./commands/approve.js')).answerCommand(...args);
const workerCommand: typeof import('./commands/worker.js').workerCommand = async (...args) => (await import('./commands/worker.js')).workerCommand(...args);
const authLoginCommand: typeof import('./commands/auth.js').authLoginCommand = async (...args) => (await import('./commands/auth.js')).authLoginCommand(...args);
const authStatusCommand: typeof import('./commands/auth.js').authStatusCommand = async (...args) => (await import('./commands/auth.js')).authStatusCommand(...args);
const authLogoutCommand: typeof import('./commands/auth.js').authLogoutCommand = async (...args) => (await import('./commands/auth.js')).authLogoutCommand(...args);

/** The options a command function takes, as commander parses them (after `--flag`s the command declares). */
type OptionsOf<Command extends (...args: never[]) => unknown, At extends number> = Parameters<Command>[At];
/** `--queue <url>` of run, serve and worker. */
type QueueFlag = { queue?: string };

/** `--queue URL` reaches the config as RUNNER_QUEUE_URL, where it wins over `queue:`. */
function withQueue(io: CliIO, queue: string | undefined): CliIO {
  return queue ? { ...io, env: { ...io.env, [QUEUE_URL_ENV]: queue } } : io;
}

/** Runs the CLI with `argv` (without node and script) and resolves with the exit code. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  let exitCode: number = ExitCode.succeeded;
  const program = new Command('runner')
    .description('Run declarative YAML workflows across MCP apps')
    .version('0.1.0')
    .option('-c, --config <path>', 'runner.config.yaml to use (default: nearest one up from the current folder)')
    .option('--debug', 'print stack traces')
    .showHelpAfterError('(run `runner --help` for usage)')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });

  const globals = (): GlobalOptions => program.opts<GlobalOptions>();
  // Commander passes an action the arguments and options its command declares: the action's parameters type them.
  const handle = <Args extends unknown[]>(action: (...args: Args) => Promise<number>) => async (...args: unknown[]) => {
    exitCode = await action(...(args as Args));
  };

  program
    .command('run')
    .description('run a workflow once; progress on stderr')
    .argument('<workflow>', 'workflow file')
    .option('-i, --input <key=value>', 'an input value (repeatable); key=@file.json reads it from a JSON file (@@ for a literal @)', collect, [])
    .option('--inputs <file.json>', 'input values from a JSON file (-i wins over it)')
    .option('--json', 'print the run record as JSON on stdout')
    .option('--yes', 'allow every call the policy would ask about')
    .option('--allow <glob>', 'allow asks for app.tool names matching the glob (repeatable)', collect, [])
    .option('--dry-run', 'connect, validate and print the plan without calling any tool')
    .option('--queue <url>', 'queue mode: dispatch app calls as jobs on this redis:// URL for `runner worker` processes (wins over `queue:`)')
    .action(handle((workflow: string, options: OptionsOf<typeof runCommand, 1> & QueueFlag) => runCommand(workflow, { ...globals(), ...options }, withQueue(io, options.queue))));

  const runs = program
    .command('runs')
    .description('run history from the run store, newest first')
    .option('--workflow <name>', 'only runs of this workflow')
    .option('--status <status>', 'only runs with this status: running, waiting, succeeded, failed or cancelled')
    .option('--since <duration>', 'only runs that started within this long (e.g. 7d, 12h)')
    .option('--limit <n>', 'at most this many runs')
    .option('--json', 'print JSON')
    .action(handle((options: OptionsOf<typeof runsCommand, 0>) => runsCommand({ ...globals(), ...options }, io)));
  runs
    .command('show')
    .description('one run: each step\'s status, duration, attempts, foreach items and saved files')
    .argument('<id>', 'run id (a unique prefix is enough), or `latest`')
    .option('--json', 'print the run record as JSON')
    .action(handle((id: string, options: OptionsOf<typeof showRunCommand, 1>) => showRunCommand(id, { ...globals(), ...runs.opts(), ...options }, io)));
  runs
    .command('prune')
    .description('delete old runs, folders and history (never one still running); no flags: apply `retention:` from the config')
    .option('--older-than <duration>', 'runs that started longer ago than this (e.g. 30d)')
    .option('--keep <n>', 'keep the newest N runs of each workflow')
    .option('--workflow <name>', 'only runs of this workflow')
    .option('--dry-run', 'list what would be deleted, delete nothing')
    .option('--json', 'print JSON')
    .action(handle((options: OptionsOf<typeof pruneCommand, 0>) => pruneCommand({ ...globals(), ...runs.opts(), ...options }, io)));

  program
    .command('logs')
    .description('the captured app logs (stderr) of a run')
    .argument('<id>', 'run id (a unique prefix is enough), or `latest`')
    .argument('[app]', 'only this app')
    .action(handle((id: string, app: string | undefined) => logsCommand(id, app, globals(), io)));

  program
    .command('report')
    .description('(re)write the run\'s report.html (step graph, timeline, every step\'s details; opens offline) and print its path')
    .argument('<id>', 'run id (a unique prefix is enough), or `latest`')
    .action(handle((id: string) => reportCommand(id, globals(), io)));

  program
    .command('resume')
    .description('continue a failed or interrupted run; succeeded steps are not run again')
    .argument('<id>', 'run id (a unique prefix is enough)')
    .option('--rerun-unknown', 'also run again steps whose outcome is unknown (they may have had their side effect)')
    .option('--json', 'print the run record as JSON on stdout')
    .option('--yes', 'allow every call the policy would ask about')
    .option('--allow <glob>', 'allow asks for app.tool names matching the glob (repeatable)', collect, [])
    .action(
      handle((id: string, options: OptionsOf<typeof runCommand, 1> & { rerunUnknown?: boolean }) =>
        runCommand('', { ...globals(), ...options, input: [], resume: { id, rerunUnknown: Boolean(options.rerunUnknown) } }, io),
      ),
    );

  for (const [name, decision, description] of [
    ['approve', 'approved', 'approve a step waiting for an approval (`policy.headless-ask: wait`); serve, or `runner resume`, then runs it'],
    ['deny', 'denied', 'deny a step waiting for an approval; serve, or `runner resume`, then ends it denied with nothing sent'],
  ] as const) {
    program
      .command(name)
      .description(description)
      .argument('<run>', 'run id (a unique prefix is enough), or `latest`')
      .argument('<step>', 'the waiting step\'s id')
      .option('--json', 'print the recorded answer as JSON: { run, step, approval }')
      .addHelpText('after', '\nThe answer is recorded with the user name (RUNNER_USER, else the OS account) and the time.\nExit codes: 0 recorded; 2 the run or step is not waiting, was answered already, or its approval expired.')
      .action(handle((run: string, step: string, options: OptionsOf<typeof answerCommand, 3>) => answerCommand(decision, run, step, { ...globals(), ...options }, io)));
  }

  program
    .command('validate')
    .description('check workflow files; --online also checks tools and arguments against the live apps')
    .argument('<workflow...>', 'workflow files')
    .option('--online', 'connect to the apps and check tool names, arguments and the types flowing between steps')
    .option('--json', 'print every diagnostic as JSON on stdout: { ok, strict, online, errors, warnings, files: [{ file, ok, name, steps, errors, warnings }], diagnostics: [{ file, line, column, severity, message, hint }] }')
    .option('--strict', 'count warnings as problems (exit 2)')
    .addHelpText('after', '\nExit codes: 0 no errors (warnings are printed but stop nothing); 2 an error, or with --strict a warning.')
    .action(handle((files: string[], options: OptionsOf<typeof validateCommand, 1>) => validateCommand(files, { ...globals(), ...options }, io)));

  program
    .command('check')
    .description('audit workflows before anything runs: each step’s policy decision, where each secret can flow, destructive and open-world steps, changes since runner.lock')
    .argument('<workflow...>', 'workflow files')
    .option('--json', 'print the audit as JSON on stdout: { ok, workflows: [{ file, name, triggered, apps, steps: [{ id, uses, annotations, hints, policy, headless, denied, problems }] }], secrets: [{ name, apps, steps }], denied, destructive, openWorld, problems, lock: { file, present, drifts } }')
    .addHelpText('after', '\nExit codes: 0 every step would be allowed or asked, and no tool changed since runner.lock; 1 a step would be refused or could not be checked, or a tool changed since the lock; 2 a broken config or workflow.')
    .action(handle((files: string[], options: OptionsOf<typeof checkCommand, 1>) => checkCommand(files, { ...globals(), ...options }, io)));

  program
    .command('lock')
    .description('write runner.lock beside the config: the definitions of the tools the workflows call, checked before every run')
    .argument('[workflow...]', 'workflow files (default: every workflow in workflows/, and tools no longer called are dropped)')
    .option('--update', 'accept changes to tools already in the lock')
    .option('--json', 'print { file, written, created, tools, apps, drifts } on stdout')
    .addHelpText('after', '\nExit codes: 0 written or up to date; 2 a locked tool changed (nothing written; --update accepts it) or a workflow is invalid; 1 an app could not be reached.')
    .action(handle((files: string[], options: OptionsOf<typeof lockCommand, 1>) => lockCommand(files, { ...globals(), ...options }, io)));

  program
    .command('tools')
    .description('list every tool with its annotations and the policy decision that applies; APP.TOOL: its schemas and a sample step')
    .argument('[app]', 'only this app; or APP.TOOL for one tool in detail')
    .addOption(new Option('--json', 'print JSON, with each tool\'s inputSchema and outputSchema'))
    .action(handle((app: string | undefined, options: OptionsOf<typeof toolsCommand, 1>) => toolsCommand(app, { ...globals(), ...options }, io)));

  program
    .command('call')
    .description('call one tool, as a one-step run under the same policy and artifacts rules; prints its text (or outputs as JSON)')
    .argument('<tool>', 'APP.TOOL')
    .argument('[args...]', 'arguments as name=value, typed by the tool\'s inputSchema; name=@file.json reads a JSON value (@@ for a literal @)')
    .option('--json', 'print the run record as JSON on stdout')
    .option('--yes', 'allow the call if the policy would ask about it')
    .option('--allow <glob>', 'allow asks for app.tool names matching the glob (repeatable)', collect, [])
    .action(handle((tool: string, args: string[], options: OptionsOf<typeof callCommand, 2>) => callCommand(tool, args, { ...globals(), ...options }, io)));

  const auth = program.command('auth').description('OAuth for HTTP apps: log in, show status, log out (tokens are kept per user, never under artifacts)');
  auth
    .command('login')
    .description('log in to an app with `auth: { type: oauth }`: prints the authorization URL and waits for the redirect on 127.0.0.1')
    .argument('<app>', 'app name')
    .option('--scope <scope>', 'ask for this scope too, beside the config\'s `auth.scopes` (repeatable)', collect, [])
    .option('--no-browser', 'only print the URL; do not open a browser')
    .option('--timeout <duration>', 'how long to wait for the redirect', '5m')
    .action(handle((app: string, options: OptionsOf<typeof authLoginCommand, 1>) => authLoginCommand(app, { ...globals(), ...options }, io)));
  auth
    .command('status')
    .description('each app with `auth:`: its type, whether it is logged in, expiry and scopes (never a token)')
    .argument('[app]', 'only this app')
    .option('--json', 'print JSON')
    .action(handle((app: string | undefined, options: OptionsOf<typeof authStatusCommand, 1>) => authStatusCommand(app, { ...globals(), ...options }, io)));
  auth
    .command('logout')
    .description('delete an app\'s stored tokens and client registration')
    .argument('<app>', 'app name')
    .action(handle((app: string) => authLogoutCommand(app, globals(), io)));

  program
    .command('init')
    .description('write a starter runner.config.yaml and workflows/hello.yaml in the current folder (never overwrites)')
    .action(handle(() => initCommand(globals(), io)));

  const longRunning: [ServeMode, string][] = [
    ['watch', 'run workflows on their on.watch triggers until stopped'],
    ['cron', 'run workflows on their on.schedule triggers until stopped'],
    ['serve', 'run workflows on their watch and schedule triggers until stopped (default: every workflow in workflows/)'],
  ];
  for (const [mode, description] of longRunning) {
    const command = program
      .command(mode)
      .description(description)
      .argument('[workflow...]', 'workflow files (default: those in workflows/ with such a trigger)');
    if (mode !== 'cron') command.option('--initial', 'files already there at start trigger too');
    command
      .option('--grace <duration>', 'on SIGINT/SIGTERM, how long runs in flight may finish before they are cancelled', '30s')
      .option('--json', 'print one JSON object per event on stdout')
      .option('--yes', 'allow every call the policy would ask about')
      .option('--allow <glob>', 'allow asks for app.tool names matching the glob (repeatable)', collect, [])
      .option('--queue <url>', 'queue mode: dispatch app calls as jobs on this redis:// URL for `runner worker` processes (wins over `queue:`)')
      .action(handle((files: string[], options: OptionsOf<typeof serveCommand, 2> & QueueFlag) => serveCommand(mode, files, { ...globals(), ...options }, withQueue(io, options.queue))));
  }

  program
    .command('ui')
    .description('the runs and their reports in a browser, live while a run goes on, on 127.0.0.1 until stopped')
    .option('--port <n>', 'port to listen on (0: any free one)', '8787')
    .option('--host <address>', 'listen on this address instead of 127.0.0.1 (others can then see the runs)')
    .option('--allow-actions', 'allow resuming runs and starting workflows from the UI (guarded by a per-start token)')
    .action(handle((options: OptionsOf<typeof uiCommand, 0>) => uiCommand({ ...globals(), ...options }, io)));

  program
    .command('worker')
    .description('queue mode: execute app calls dispatched by `runner run` and `serve`, for every app in the config, until stopped')
    .option('--queue <url>', 'the redis:// URL of the queue (default: `queue:` in the config)')
    .action(handle((options: OptionsOf<typeof workerCommand, 0> & QueueFlag) => workerCommand({ ...globals(), ...options }, withQueue(io, options.queue))));

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return ExitCode.succeeded;
      return ExitCode.invalid;
    }
    return reportError(error, { stderr: io.stderr, debug: Boolean(program.opts<GlobalOptions>().debug) });
  }
}
