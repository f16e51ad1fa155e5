// Where the test suite's CPU goes. Runs a command (by default the whole suite,
// `npx vitest run`), samples /proc while it runs, and prints the CPU of every
// process it started, by kind (the vitest workers, runner started as a command,
// each fixture app, the demo apps, chromium, ...), how much of the time the
// cores sat idle and when (the stretches of the run when they did, with the
// test files that ran then), and the processes each test file started (for the
// default command, or one that adds `--reporter=./scripts/suite-cpu-reporter.mjs`,
// which says when each file ran). Linux only.
//
//   node scripts/suite-cpu.mjs [--interval 50] [--json FILE] [-- COMMAND ARGS...]
//
// A process is read at each sample, so up to one interval of its CPU before it
// exits is not counted, and a process that lives less than an interval may not
// be seen at all: totals come out a little low. The sampler's own CPU is printed.
// It reads /proc through the built runner's process-info module: run `npm run build` first.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listProcessStats } from '../dist/process-info.js';
import { cpuByKind, formatReport, idleStretches, idleSummary, parseCpuLine, processesByFile, statOf } from './suite-cpu-report.mjs';

const { values: options, positionals } = parseArgs({
  options: { interval: { type: 'string', default: '50' }, json: { type: 'string' } },
  allowPositionals: true,
});
const intervalMs = Number(options.interval);
if (process.platform !== 'linux' || !(intervalMs >= 5)) {
  console.error('usage (Linux): node scripts/suite-cpu.mjs [--interval MS, at least 5] [--json FILE] [-- COMMAND ARGS...]');
  process.exit(2);
}

const ticksPerSecond = readTicksPerSecond();
// The reporter writes when each test file ran here (a command of your own can name it with --reporter too).
const reportDir = mkdtempSync(join(tmpdir(), 'runner-suite-cpu-'));
const filesReport = join(reportDir, 'files.json');
const reporter = fileURLToPath(new URL('./suite-cpu-reporter.mjs', import.meta.url));
const command = positionals.length > 0 ? positionals : ['npx', 'vitest', 'run', '--reporter=default', `--reporter=${reporter}`];

/** Every process seen that was not running when we started, by pid and start time (a pid can be used again). */
const seen = new Map();
/** How many samples after the first a process's command line is read again (see sample). */
const EXEC_CHECKS = 5;
const before = new Set(listProcesses().map(([pid, fields]) => processKey(pid, fields)));
const cpuSamples = [readCpuLine()];
const started = Date.now();
const child = spawn(command[0], command.slice(1), { stdio: 'inherit', env: { ...process.env, RUNNER_SUITE_CPU_FILES: filesReport } });
let timer = setTimeout(sample, intervalMs);
const code = await new Promise((resolve) => child.on('exit', (exitCode, signal) => resolve(exitCode ?? 128 + (constants.signals[signal] ?? 0))));
clearTimeout(timer);
sample(false);
const wallSeconds = (Date.now() - started) / 1000;

const processes = [...seen.values()];
const kinds = cpuByKind(processes, ticksPerSecond);
const idle = idleSummary(cpuSamples, ticksPerSecond);
const testFiles = readTestFiles(filesReport);
const files = processesByFile(processes, testFiles, ticksPerSecond);
const stretches = idleStretches(cpuSamples, testFiles, ticksPerSecond);
const own = process.cpuUsage();
const sampler = (own.user + own.system) / 1e6;
console.log(`\n${formatReport({ wallSeconds, kinds, idle, files, stretches, sampler })}`);
if (options.json) writeFileSync(options.json, `${JSON.stringify({ command, wallSeconds, kinds, idle, files, stretches, testFiles, processes }, null, 2)}\n`);
rmSync(reportDir, { recursive: true, force: true });
process.exit(code);

function sample(again = true) {
  const now = Date.now();
  for (const [pid, fields] of listProcesses()) {
    const key = processKey(pid, fields);
    if (before.has(key)) continue;
    const stat = statOf(fields);
    const known = seen.get(key);
    if (known) {
      known.userTicks = Math.max(known.userTicks, stat.userTicks);
      known.systemTicks = Math.max(known.systemTicks, stat.systemTicks);
      if (known.checksLeft > 0) nameAfterExec(known);
      continue;
    }
    // A process that has exited but not been waited for yet has an empty command line: it is named by its name.
    const commandLine = readCommandLine(pid);
    if (commandLine === undefined) continue; // gone since the listing
    const name = commandLine === '' ? (readProcFile(pid, 'comm')?.trim() ?? '') : '';
    // Seen between fork and exec, a child still shows its parent's command line (a vitest worker's, for each process a
    // test spawns), and a script started through `env` shows env's until env execs the interpreter: a new process's
    // command line is read again at its next few samples.
    seen.set(key, { pid, ppid: stat.ppid, name, commandLine, firstSeen: now, userTicks: stat.userTicks, systemTicks: stat.systemTicks, checksLeft: EXEC_CHECKS });
  }
  cpuSamples.push(readCpuLine());
  if (again) timer = setTimeout(sample, intervalMs);
}

/** Names a new process by the command line it shows now, when it has execed since (an exited one shows none). */
function nameAfterExec(entry) {
  entry.checksLeft--;
  const commandLine = readCommandLine(entry.pid);
  if (commandLine) entry.commandLine = commandLine;
}

function readCommandLine(pid) {
  return readProcFile(pid, 'cmdline')?.replaceAll('\0', ' ').trim().slice(0, 10_000);
}

function listProcesses() {
  return listProcessStats() ?? [];
}

/** A process is its pid and its start time: a pid can be used again within a run. */
function processKey(pid, fields) {
  return `${pid}@${statOf(fields).startTicks}`;
}

function readProcFile(pid, file) {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

function readCpuLine() {
  return { at: Date.now(), ...parseCpuLine(readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]) };
}

function readTicksPerSecond() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** Each test file's name (relative to test/) and when it ran, as the reporter wrote them; none when it wrote nothing. */
function readTestFiles(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return [];
  }
}
