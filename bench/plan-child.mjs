// (d)'s measuring process: validates and plans one workflow file with
// parseWorkflowText + planLevels, then prints one JSON line: wall times and
// peak resident memory (VmHWM, the kernel's high-water mark for this process).
//
//   node bench/plan-child.mjs WORKSPACE_DIR WORKFLOW_FILE
import { readFileSync } from 'node:fs';
import { importDist } from './lib/dist.mjs';

const { loadConfig } = await importDist('config/load.js');
const { planLevels } = await importDist('workflow/graph.js');
const { parseWorkflowText } = await importDist('workflow/load.js');

const [workspaceDir, workflowFile] = process.argv.slice(2);

function statusKb(field) {
  const match = readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) : NaN;
}

/**
 * CPU time of this process's main thread in ms (Linux; NaN elsewhere), in 10 ms ticks. Unlike
 * wall time it hardly moves when other work shares the machine, and unlike process.cpuUsage()
 * it leaves out V8's background compiler and GC threads, which do not hold up the parse.
 */
function mainThreadCpuMs() {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
  } catch {
    return NaN;
  }
}

/**
 * How long the main thread has been runnable but waiting for a core, in ms (Linux's schedstat,
 * in ns; NaN elsewhere): what other threads took from it, V8's own compiler and GC threads among them.
 */
function mainThreadWaitMs() {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return NaN;
  }
}

const config = await loadConfig({ cwd: workspaceDir, env: process.env });
const text = readFileSync(workflowFile, 'utf8');
const baselineRssKb = statusKb('VmRSS');
const cpuStarted = mainThreadCpuMs();
const waitStarted = mainThreadWaitMs();
const started = performance.now();
const workflow = parseWorkflowText(text, workflowFile, config);
const parsed = performance.now();
const levels = planLevels(workflow.steps);
const planned = performance.now();
const cpuMs = mainThreadCpuMs() - cpuStarted;
const waitMs = mainThreadWaitMs() - waitStarted;
const memory = process.memoryUsage();
process.stdout.write(
  `${JSON.stringify({
    steps: workflow.steps.length,
    levels: levels.length,
    bytes: Buffer.byteLength(text),
    parseMs: parsed - started,
    planMs: planned - parsed,
    totalMs: planned - started,
    mainThreadCpuMs: cpuMs,
    mainThreadWaitMs: waitMs,
    baselineRssMB: baselineRssKb / 1024,
    peakRssMB: statusKb('VmHWM') / 1024,
    rssAfterMB: memory.rss / 2 ** 20,
    heapUsedAfterMB: memory.heapUsed / 2 ** 20,
  })}\n`,
);
