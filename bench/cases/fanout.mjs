// (b) 2,000 independent 5 ms calls, 32 in flight: runner throughput against
// 32 concurrent raw callTool loops. The runner runs them as one foreach step
// (workflow concurrency 32); 2,000 independent steps are reported alongside.
import { connectRaw, runRawFanout, verdictOf } from '../raw-client.mjs';
import { probeStepFiles } from '../lib/disk-probe.mjs';
import { measureOldGarbage } from '../lib/gc.mjs';
import { countRunFiles, openEngine, timeEngineRun } from '../lib/engine.mjs';
import { measureInterleaved } from '../lib/interleave.mjs';
import { round, say, verdict } from '../lib/stats.mjs';
import { createWorkspace, foreachWorkflowYaml, independentWorkflowYaml, tmpfsDir } from '../lib/workspace.mjs';

export const THROUGHPUT_TARGET = 0.95;
/** The same calls as separate steps. */
export const STEPS_THROUGHPUT_TARGET = 0.9;

export async function benchFanout({ reps, calls = 2000, inFlight = 32, delayMs = 5, sides }) {
  const disk = createWorkspace({ concurrency: inFlight });
  // Diagnostic only: the foreach run again with its artifacts in RAM, to show the disk's share.
  const ram = tmpfsDir ? createWorkspace({ concurrency: inFlight, tmpfs: true }) : null;
  const engine = await openEngine(disk);
  const ramEngine = ram ? await openEngine(ram) : null;
  const probe = await connectRaw(disk.app);
  const prior = verdictOf(probe);
  await probe.close();
  const raw = await connectRaw(disk.app, prior, { listTools: true });
  const items = Array.from({ length: calls }, (_, i) => i);
  const files = {};
  const runnerSide = (name, onEngine, text, inputs, check) => {
    const workflow = onEngine.parse(text, `${name}.yaml`);
    return async () => {
      const run = await timeEngineRun(onEngine, workflow, inputs);
      if (!check(run.record)) throw new Error(`fanout ${name}: unexpected run record`);
      files[name] ??= countRunFiles(run.record);
      return run;
    };
  };
  const foreachDone = (record) => record.steps[0].items.length === calls && record.steps[0].text.at(-1) === `item ${calls - 1}`;
  try {
    const stepFilesUs = { disk: probeStepFiles(disk.dir), ...(ram && { ram: probeStepFiles(ram.artifacts) }) };
    say(`(b) writing one step folder + result.json now costs ${stepFilesUs.disk} µs on the workspace disk${ram ? `, ${stepFilesUs.ram} µs on tmpfs` : ''}`);
    const measured = {};
    if (sides.raw) measured.raw = () => runRawFanout(raw, calls, inFlight, delayMs);
    if (sides.runner) {
      measured.foreach = runnerSide('foreach', engine, foreachWorkflowYaml('fanout-foreach', inFlight, delayMs), { items }, foreachDone);
      measured.steps = runnerSide('steps', engine, independentWorkflowYaml('fanout-steps', calls, inFlight, delayMs), {}, (record) => record.steps.length === calls);
      if (ramEngine) measured.foreachRam = runnerSide('foreachRam', ramEngine, foreachWorkflowYaml('fanout-foreach', inFlight, delayMs), { items }, foreachDone);
    }
    const times = await measureInterleaved(measured, reps);
    const perSecond = (ms) => round((calls * 1000) / ms, 0);
    const rawMs = times.raw?.ms ?? NaN;
    const result = {
      calls,
      inFlight,
      delayMs,
      stepFilesUs,
      // The floor: calls / inFlight back-to-back delays, with zero overhead anywhere.
      idealMs: round((calls / inFlight) * delayMs, 1),
      rawMs: round(rawMs, 1),
      rawCallsPerS: perSecond(rawMs),
      rawCpuUsPerCall: round((times.raw?.cpuMs * 1000) / calls, 1),
      rawRunsMs: times.raw?.runsMs,
    };
    say(`(b) ${calls} calls x ${delayMs} ms, ${inFlight} in flight: raw ${result.rawMs} ms = ${result.rawCallsPerS} calls/s (zero-overhead floor ${result.idealMs} ms)`);
    const describe = (name) => ({
      runnerMs: round(times[name]?.ms, 1),
      runnerCallsPerS: perSecond(times[name]?.ms),
      throughputRatio: round(rawMs / times[name]?.ms, 3),
      runnerCpuUsPerCall: round((times[name]?.cpuMs * 1000) / calls, 1),
      filesPerRun: files[name],
      runnerRunsMs: times[name]?.runsMs,
    });
    result.foreach = describe('foreach');
    const check = verdict(result.foreach.throughputRatio, THROUGHPUT_TARGET, 'min');
    Object.assign(result.foreach, { target: THROUGHPUT_TARGET, met: check.met });
    say(`(b) runner, one foreach step over ${calls} items: ${result.foreach.runnerMs} ms = ${result.foreach.runnerCallsPerS} calls/s, runner/raw throughput ${result.foreach.throughputRatio} (${check.text})`);
    result.steps = describe('steps');
    const stepsCheck = verdict(result.steps.throughputRatio, STEPS_THROUGHPUT_TARGET, 'min');
    Object.assign(result.steps, { target: STEPS_THROUGHPUT_TARGET, met: stepsCheck.met });
    say(`(b) runner, ${calls} independent steps: ${result.steps.runnerMs} ms, runner/raw throughput ${result.steps.throughputRatio} (${stepsCheck.text})`);
    if (ramEngine) {
      result.foreach.artifactsInRam = describe('foreachRam');
      say(`    diagnostic, foreach with artifacts on tmpfs instead of disk: ${result.foreach.artifactsInRam.runnerMs} ms, runner/raw throughput ${result.foreach.artifactsInRam.throughputRatio}`);
    }
    say(
      `    CPU of this process per call: runner foreach ${result.foreach.runnerCpuUsPerCall} µs${result.foreach.artifactsInRam ? ` (tmpfs: ${result.foreach.artifactsInRam.runnerCpuUsPerCall} µs)` : ''}, ` +
        `steps ${result.steps.runnerCpuUsPerCall} µs, raw ${result.rawCpuUsPerCall} µs`,
    );
    for (const [name, counted] of Object.entries(files)) if (counted.results !== calls || !counted.runJson) say(`    ${name}: MISSING files: ${JSON.stringify(counted)}`);
    // Diagnostic: the garbage a run leaves in the old generation, which every scavenge copies on its way there.
    const oldGarbageKBPerCall = {};
    for (const [name, run] of Object.entries({ foreach: measured.foreach, raw: measured.raw })) {
      if (run) oldGarbageKBPerCall[name] = round((await measureOldGarbage(run)).deadBytes / 1024 / calls, 2);
    }
    result.oldGarbageKBPerCall = oldGarbageKBPerCall;
    say(
      `    diagnostic, old-generation garbage per call (promoted or allocated there, dead by the next full GC; one untimed run each): ` +
        `runner foreach ${oldGarbageKBPerCall.foreach ?? 'n/a'} KB, raw ${oldGarbageKBPerCall.raw ?? 'n/a'} KB`,
    );
    return result;
  } finally {
    await raw.close();
    await engine.close();
    await ramEngine?.close();
    disk.remove();
    ram?.remove();
  }
}
