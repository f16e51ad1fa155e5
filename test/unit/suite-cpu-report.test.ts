import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import SuiteCpuReporter from '../../scripts/suite-cpu-reporter.mjs';
import { cpuByKind, formatReport, idleStretches, idleSummary, kindOf, parseCpuLine, processesByFile, statOf } from '../../scripts/suite-cpu-report.mjs';

// The tables of scripts/suite-cpu.mjs, which says where the test suite's CPU goes.

const proc = (pid: number, ppid: number, commandLine: string, userTicks: number, systemTicks = 0, extra: Record<string, unknown> = {}) => ({
  pid,
  ppid,
  commandLine,
  userTicks,
  systemTicks,
  firstSeen: 0,
  ...extra,
});

describe('suite CPU report', () => {
  it('names the processes the suite starts by their command lines', () => {
    expect(kindOf('/usr/bin/node --experimental-import-meta-resolve --require /work/main/node_modules/vitest/suppress-warnings.cjs')).toMatch(/^vitest/);
    expect(kindOf('/usr/bin/node /work/main/dist/cli/main.js --config /tmp/w/runner.config.yaml serve --json')).toBe('runner command');
    expect(kindOf("/bin/sh -c set -f\ngroups=''\n... runner-reaper")).toBe('runner orphan reaper');
    expect(kindOf('node --snapshot-blob /work/main/node_modules/.cache/runner-test/faulty-1.blob /work/main/test/apps/faulty.js --counter c')).toBe('fixture app faulty');
    expect(kindOf('/usr/bin/node /work/main/examples/apps/sheet/server.js --root /tmp/x')).toBe('demo app sheet');
    expect(kindOf('/usr/bin/node /work/main/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio')).toBe('reference server everything');
    expect(kindOf('bash -e -o pipefail -c npx runner tools everything.echo')).toBe('npm and npx');
    expect(kindOf('/usr/lib/chromium/chromium --type=zygote --no-sandbox')).toBe('chromium');
    expect(kindOf('/usr/bin/redis-server --port 35859 --bind 127.0.0.1')).toBe('redis-server');
    expect(kindOf('cat /proc/1/stat')).toBe('other');
    expect(kindOf('')).toMatch(/^not read/);
  });

  it('reads the parent, ticks and start time from the stat fields after the name', () => {
    const fields = 'S 17 4242 4242 0 -1 4194304 100 0 0 0 250 75 0 0 20 0 1 0 123 0 0'.split(' ');
    expect(statOf(fields)).toEqual({ ppid: 17, userTicks: 250, systemTicks: 75, startTicks: 123 });
  });

  it('adds up CPU by kind, most first, counting a helper no rule names with its parent', () => {
    const rows = cpuByKind(
      [
        proc(10, 1, '/usr/bin/node /work/main/test/apps/faulty.js', 30, 10),
        proc(11, 1, '/usr/bin/node /work/main/test/apps/faulty.js', 20, 10),
        proc(12, 1, '/usr/bin/node /work/main/dist/cli/main.js run wf.yaml', 100, 50),
        proc(13, 1, '/bin/sh -c set -f ... runner-reaper', 1, 1),
        proc(14, 13, 'awk { print }', 2, 2),
        proc(15, 1, '', 3, 0, { name: 'npm' }),
      ],
      100,
    );
    expect(rows.map((row) => [row.kind, row.count, row.userSeconds, row.systemSeconds])).toEqual([
      ['runner command', 1, 1, 0.5],
      ['fixture app faulty', 2, 0.5, 0.2],
      ['runner orphan reaper', 2, 0.03, 0.03],
      ['npm and npx', 1, 0.03, 0],
    ]);
  });

  it('gives each process to the test files that ran when it started, split between files that ran at once, leaving out the workers', () => {
    const files = [
      { name: 'integration/a.test.ts', start: 1_000, end: 5_000 },
      { name: 'integration/b.test.ts', start: 4_000, end: 9_000 },
    ];
    const rows = processesByFile(
      [
        proc(1, 0, 'x', 100, 0, { firstSeen: 2_000 }),
        proc(2, 0, 'x', 60, 20, { firstSeen: 4_500 }),
        proc(3, 0, 'x', 50, 0, { firstSeen: 9_500 }),
        proc(4, 0, '/usr/bin/node /work/main/node_modules/vitest/dist/workers/forks.js', 900, 0, { firstSeen: 1_500 }),
      ],
      files,
      100,
    );
    expect(rows).toEqual([
      { file: 'integration/a.test.ts', count: 1.5, cpuSeconds: 1.4 },
      { file: 'integration/b.test.ts', count: 0.5, cpuSeconds: 0.4 },
    ]);
  });

  it('says how long the cores sat idle, iowait included', () => {
    const first = parseCpuLine('cpu  100 0 100 1000 50 0 0 0 0 0');
    const last = parseCpuLine('cpu  700 0 300 1100 150 0 0 0 0 0');
    expect(first).toEqual({ total: 1250, idle: 1050 });
    expect(idleSummary([first, last], 100)).toEqual({ idleCoreSeconds: 2, busyShare: 0.8 });
    expect(idleSummary([first], 100)).toEqual({ idleCoreSeconds: 0, busyShare: 0 });
  });

  it('finds the stretches when the cores sat idle, joins the windows that follow each other, and names the files that ran then', () => {
    // Two cores, 100 ticks a second each: a sample every second, 200 ticks between two samples.
    const idleTicks = [0, 10, 150, 120, 20, 0, 60, 200, 10];
    let total = 0;
    let idle = 0;
    const samples = [{ at: 1_000_000, total, idle }];
    for (const [second, ticks] of idleTicks.entries()) {
      total += 200;
      idle += ticks;
      samples.push({ at: 1_000_000 + (second + 1) * 1000, total, idle });
    }
    const files = [
      { name: 'a.test.ts', start: 1_000_000, end: 1_003_500 },
      { name: 'b.test.ts', start: 1_002_500, end: 1_009_000 },
      { name: 'c.test.ts', start: 1_004_000, end: 1_009_000 },
    ];
    // 2 s windows (a sample counts in the window it was read in): 0 idle ticks of 200, then 160, 140, 60 and 210 of 400.
    expect(idleStretches(samples, files, 100)).toEqual([
      { startSeconds: 2, endSeconds: 6, idleShare: 300 / 800, idleCoreSeconds: 3, files: ['a.test.ts', 'b.test.ts', 'c.test.ts'] },
      { startSeconds: 8, endSeconds: 10, idleShare: 210 / 400, idleCoreSeconds: 2.1, files: ['b.test.ts', 'c.test.ts'] },
    ]);
    expect(idleStretches(samples, files, 100, { threshold: 0.6 })).toEqual([]);
    expect(idleStretches(samples.slice(0, 1), files, 100)).toEqual([]);
  });

  it('prints the totals, a row per kind and the files that started the most', () => {
    const text = formatReport({
      wallSeconds: 100,
      kinds: [{ kind: 'runner command', count: 3, userSeconds: 2, systemSeconds: 1 }],
      idle: { idleCoreSeconds: 20, busyShare: 0.9 },
      files: [{ file: 'integration/a.test.ts', count: 2, cpuSeconds: 1.5 }],
      stretches: [
        { startSeconds: 40, endSeconds: 48, idleShare: 0.45, idleCoreSeconds: 7.2, files: ['integration/a.test.ts', 'unit/b.test.ts'] },
        { startSeconds: 0, endSeconds: 2, idleShare: 0.3, idleCoreSeconds: 1.2, files: [] },
      ],
      sampler: 2.5,
    });
    expect(text.split('\n')).toEqual([
      'wall 100.0 s; CPU of the processes it started 3.0 s (user 2.0, system 1.0)',
      'cores busy 90% of the time, idle for 20.0 core-seconds in all; this sampler used 2.5 s',
      '',
      '  CPU s    user  system  count  kind',
      '    3.0     2.0     1.0      3  runner command',
      '',
      'processes started while each test file ran (shared between files that ran at once):',
      '  CPU s  count  file',
      '    1.5    2.0  integration/a.test.ts',
      '',
      'when the cores sat idle (stretches of 2 s windows at least a quarter idle; the test files that ran then):',
      ' idle s  share  seconds into the run: files',
      '    7.2    45%  40-48: integration/a.test.ts, unit/b.test.ts',
      '    1.2    30%  0-2: (no test file)',
    ]);
  });

  it('the reporter writes when each test file was queued on a worker and when it ended', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'runner-suite-cpu-test-')), 'files.json');
    vi.stubEnv('RUNNER_SUITE_CPU_FILES', file);
    const now = vi.spyOn(Date, 'now');
    try {
      const reporter = new SuiteCpuReporter();
      const module = (name: string) => ({ moduleId: join(process.cwd(), 'test', name) });
      now.mockReturnValue(1_000);
      reporter.onTestModuleQueued(module('unit/a.test.ts'));
      now.mockReturnValue(2_500);
      reporter.onTestModuleEnd(module('unit/a.test.ts'));
      reporter.onTestModuleQueued(module('integration/b.test.ts'));
      now.mockReturnValue(4_000);
      reporter.onTestRunEnd();
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual([
        { name: 'unit/a.test.ts', start: 1_000, end: 2_500 },
        { name: 'integration/b.test.ts', start: 2_500, end: 4_000 },
      ]);
    } finally {
      now.mockRestore();
      vi.unstubAllEnvs();
    }
  });
});
