// The tables of scripts/suite-cpu.mjs: pure functions of what it sampled from
// /proc while a command (the test suite) ran.

const VITEST = 'vitest (workers and the tests run in them)';

/**
 * What kind of process a command line is, by the first rule that matches. The
 * kinds are the ones the suite's CPU is spent on: the vitest workers (test code
 * and the runs they make in their own process), runner started as a command,
 * the fixture and demo apps, and the real servers and browser the tests start.
 */
export const PROCESS_KINDS = [
  [/runner-reaper/, 'runner orphan reaper'],
  [/\/dist\/cli\/main\.js|\/bin\/runner\b/, 'runner command'],
  [/\bvitest\b/, VITEST],
  [/test\/apps\/faulty/, 'fixture app faulty'],
  [/test\/apps\/shifting/, 'fixture app shifting'],
  [/test\/apps\/hostile-data/, 'fixture app hostile-data'],
  [/test\/apps\//, 'other fixture apps'],
  [/examples\/apps\/sheet|\bsheet\b.*server\.js/, 'demo app sheet'],
  [/examples\/apps\/image|\bimage\b.*server\.js/, 'demo app image'],
  [/server-everything/, 'reference server everything'],
  [/chrom(e|ium)/, 'chromium'],
  [/redis-server/, 'redis-server'],
  [/node_modules\//, 'third-party servers'],
  [/\bnpm\b|\bnpx\b/, 'npm and npx'],
  [/^(\/usr)?\/bin\/(ba|da)?sh\b|^(ba|da)?sh\b/, 'shells'],
];

/** The kind of process `commandLine` is (see PROCESS_KINDS); 'other' when no rule matches. */
export function kindOf(commandLine) {
  if (commandLine === '') return 'not read (gone before it was sampled)';
  for (const [pattern, kind] of PROCESS_KINDS) if (pattern.test(commandLine)) return kind;
  return 'other';
}

/**
 * The kind of each process: by its command line (by its name when it had
 * exited before its command line could be read), or, for one no rule names (a
 * `cat` or `awk` the reaper runs, a tool a shell runs), its parent's kind.
 */
function kindsOf(processes) {
  const byPid = new Map(processes.map((process) => [process.pid, process]));
  const kinds = new Map();
  const resolve = (process, depth = 0) => {
    let kind = kinds.get(process);
    if (kind) return kind;
    kind = kindOf(process.commandLine || process.name || '');
    const parent = byPid.get(process.ppid);
    if (kind === 'other' && parent && depth < 32) kind = resolve(parent, depth + 1);
    kinds.set(process, kind);
    return kind;
  };
  for (const process of processes) resolve(process);
  return kinds;
}

/**
 * The parent pid, CPU ticks and start time (in ticks since boot: with the pid,
 * what tells a process from a later one given the same pid) of a process, from
 * its /proc stat fields as src/process-info.ts reads them (field N of the line
 * at index N - 3).
 */
export function statOf(fields) {
  return { ppid: Number(fields[1]), userTicks: Number(fields[11]), systemTicks: Number(fields[12]), startTicks: Number(fields[19]) };
}

/**
 * CPU by kind of process: one row per kind, most CPU first. `processes` are
 * the sampled processes, `{ pid, ppid, commandLine, userTicks, systemTicks }`
 * each, with the largest tick counts seen.
 */
export function cpuByKind(processes, ticksPerSecond) {
  const rows = new Map();
  const kinds = kindsOf(processes);
  for (const process of processes) {
    const kind = kinds.get(process);
    const row = rows.get(kind) ?? { kind, count: 0, userSeconds: 0, systemSeconds: 0 };
    row.count++;
    row.userSeconds += process.userTicks / ticksPerSecond;
    row.systemSeconds += process.systemTicks / ticksPerSecond;
    rows.set(kind, row);
  }
  return [...rows.values()].sort((a, b) => b.userSeconds + b.systemSeconds - (a.userSeconds + a.systemSeconds));
}

/**
 * The processes started while each test file ran, and their CPU: a process
 * started while two files ran counts half to each. `files` are `{ name, start,
 * end }` (ms since the epoch, from scripts/suite-cpu-reporter.mjs); `processes`
 * have `firstSeen` in the same clock. Files that started no process are left
 * out, and so are vitest's own processes, which run many files.
 */
export function processesByFile(processes, files, ticksPerSecond) {
  const rows = new Map();
  const kinds = kindsOf(processes);
  for (const process of processes) {
    // A worker runs many files, and its CPU is in the table by kind.
    if (kinds.get(process) === VITEST) continue;
    const running = files.filter((file) => file.start <= process.firstSeen && process.firstSeen <= file.end);
    for (const file of running) {
      const row = rows.get(file.name) ?? { file: file.name, count: 0, cpuSeconds: 0 };
      row.count += 1 / running.length;
      row.cpuSeconds += (process.userTicks + process.systemTicks) / ticksPerSecond / running.length;
      rows.set(file.name, row);
    }
  }
  return [...rows.values()].sort((a, b) => b.cpuSeconds - a.cpuSeconds);
}

/**
 * How busy the machine was: `samples` are /proc/stat's first line at each
 * sample, `{ total, idle }` in ticks (idle counts iowait). Returns the cores'
 * idle seconds over the whole run and the share of the time they were busy.
 */
export function idleSummary(samples, ticksPerSecond) {
  if (samples.length < 2) return { idleCoreSeconds: 0, busyShare: 0 };
  const first = samples[0];
  const last = samples[samples.length - 1];
  const total = last.total - first.total;
  const idle = last.idle - first.idle;
  return { idleCoreSeconds: idle / ticksPerSecond, busyShare: total > 0 ? 1 - idle / total : 0 };
}

/**
 * The stretches of the run when the cores sat idle: the run cut into windows of
 * `windowMs`, the windows idle at least `threshold` of the time joined when
 * they follow each other, most idle core-seconds first, each with the test
 * files that ran then. Idle stretches are where the workers all waited at once
 * (on a clock, a server, a browser): what a faster machine would not shorten.
 * `samples` are /proc/stat's cpu line read through the run, `{ at, total, idle }`
 * each (`at` in ms since the epoch); `files` are `{ name, start, end }`.
 */
export function idleStretches(samples, files, ticksPerSecond, { windowMs = 2000, threshold = 0.25 } = {}) {
  if (samples.length < 2) return [];
  const started = samples[0].at;
  const windows = [];
  for (let i = 1; i < samples.length; i++) {
    const index = Math.floor((samples[i].at - started) / windowMs);
    const window = (windows[index] ??= { total: 0, idle: 0 });
    window.total += samples[i].total - samples[i - 1].total;
    window.idle += samples[i].idle - samples[i - 1].idle;
  }
  const stretches = [];
  let open;
  for (let index = 0; index <= windows.length; index++) {
    const window = windows[index];
    if (window && window.total > 0 && window.idle / window.total >= threshold) {
      open ??= { from: index, total: 0, idle: 0 };
      open.total += window.total;
      open.idle += window.idle;
      open.to = index + 1;
      continue;
    }
    if (open) stretches.push(open);
    open = undefined;
  }
  return stretches
    .map(({ from, to, total, idle }) => {
      const start = started + from * windowMs;
      const end = started + to * windowMs;
      return {
        startSeconds: (from * windowMs) / 1000,
        endSeconds: (to * windowMs) / 1000,
        idleShare: idle / total,
        idleCoreSeconds: idle / ticksPerSecond,
        files: files.filter((file) => file.start < end && file.end > start).map((file) => file.name),
      };
    })
    .sort((a, b) => b.idleCoreSeconds - a.idleCoreSeconds);
}

/** Parses /proc/stat's `cpu` line: all ticks, and the idle ones (idle + iowait). */
export function parseCpuLine(line) {
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  return { total: ticks.reduce((sum, value) => sum + value, 0), idle: ticks[3] + (ticks[4] ?? 0) };
}

/**
 * The report: wall time and CPU, CPU by kind of process, and (when given) the test files that started the most and
 * the stretches when the cores sat idle.
 * @param {{ wallSeconds: number, kinds: { kind: string, count: number, userSeconds: number, systemSeconds: number }[],
 *   idle: { idleCoreSeconds: number, busyShare: number }, files?: { file: string, count: number, cpuSeconds: number }[],
 *   stretches?: { startSeconds: number, endSeconds: number, idleShare: number, idleCoreSeconds: number, files: string[] }[],
 *   sampler?: number, topFiles?: number, topStretches?: number }} report
 */
export function formatReport({ wallSeconds, kinds, idle, files = [], stretches = [], sampler, topFiles = 15, topStretches = 8 }) {
  const user = kinds.reduce((sum, row) => sum + row.userSeconds, 0);
  const system = kinds.reduce((sum, row) => sum + row.systemSeconds, 0);
  const lines = [
    `wall ${wallSeconds.toFixed(1)} s; CPU of the processes it started ${(user + system).toFixed(1)} s (user ${user.toFixed(1)}, system ${system.toFixed(1)})`,
    `cores busy ${(idle.busyShare * 100).toFixed(0)}% of the time, idle for ${idle.idleCoreSeconds.toFixed(1)} core-seconds in all` +
      (sampler ? `; this sampler used ${sampler.toFixed(1)} s` : ''),
    '',
    `${'CPU s'.padStart(7)} ${'user'.padStart(7)} ${'system'.padStart(7)} ${'count'.padStart(6)}  kind`,
  ];
  for (const row of kinds) {
    const cpu = row.userSeconds + row.systemSeconds;
    lines.push(`${cpu.toFixed(1).padStart(7)} ${row.userSeconds.toFixed(1).padStart(7)} ${row.systemSeconds.toFixed(1).padStart(7)} ${String(row.count).padStart(6)}  ${row.kind}`);
  }
  if (files.length > 0) {
    lines.push('', 'processes started while each test file ran (shared between files that ran at once):', `${'CPU s'.padStart(7)} ${'count'.padStart(6)}  file`);
    for (const row of files.slice(0, topFiles)) lines.push(`${row.cpuSeconds.toFixed(1).padStart(7)} ${row.count.toFixed(1).padStart(6)}  ${row.file}`);
  }
  if (stretches.length > 0) {
    lines.push('', 'when the cores sat idle (stretches of 2 s windows at least a quarter idle; the test files that ran then):', `${'idle s'.padStart(7)} ${'share'.padStart(6)}  seconds into the run: files`);
    for (const row of stretches.slice(0, topStretches)) {
      lines.push(`${row.idleCoreSeconds.toFixed(1).padStart(7)} ${`${(row.idleShare * 100).toFixed(0)}%`.padStart(6)}  ${row.startSeconds}-${row.endSeconds}: ${row.files.join(', ') || '(no test file)'}`);
    }
  }
  return lines.join('\n');
}
