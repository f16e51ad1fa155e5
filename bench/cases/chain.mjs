// (a) A 1,000-step sequential chain: each step reads the previous step's
// output (`${{ steps.sN.outputs.text }}`), so it needs it. With a 5 ms tool:
// runner/raw wall time. With a 0 ms tool: the runner's overhead per step.
// Both sides talk to an app connected before the clock starts.
import { connectRaw, runRawChain, verdictOf } from '../raw-client.mjs';
import { probeStepFiles } from '../lib/disk-probe.mjs';
import { countRunFiles, openEngine, timeEngineRun } from '../lib/engine.mjs';
import { measureInterleaved } from '../lib/interleave.mjs';
import { timePipe } from '../lib/pipe-times.mjs';
import { round, say, verdict } from '../lib/stats.mjs';
import { chainWorkflowYaml, createWorkspace, tmpfsDir } from '../lib/workspace.mjs';

export const RATIO_TARGET = 1.03;
export const OVERHEAD_TARGET_US = 100;
/** Steps of the chain that the pipe is timed on, once per side after the timed runs. */
const PIPE_STEPS = 300;

export async function benchChain({ reps, steps = 1000, sides }) {
  const disk = createWorkspace();
  // Diagnostic only: the same runner with its artifacts in RAM, to show the disk's share.
  const ram = tmpfsDir ? createWorkspace({ tmpfs: true }) : null;
  const engines = { runner: await openEngine(disk), ...(ram && { runnerRam: await openEngine(ram) }) };
  const probe = await connectRaw(disk.app);
  const prior = verdictOf(probe);
  await probe.close();
  const raw = await connectRaw(disk.app, prior, { listTools: true });
  try {
    const result = {
      stepFilesUs: { disk: probeStepFiles(disk.dir), ...(ram && { ram: probeStepFiles(ram.artifacts) }) },
    };
    say(`(a) writing one step folder + result.json now costs ${result.stepFilesUs.disk} µs on the workspace disk${ram ? `, ${result.stepFilesUs.ram} µs on tmpfs` : ''}`);
    for (const delayMs of [5, 0]) {
      const name = `chain-${delayMs}ms`;
      const text = chainWorkflowYaml(name, steps, delayMs);
      const variants = delayMs === 0 ? Object.keys(engines) : ['runner'];
      const files = {};
      const measured = {};
      if (sides.raw) measured.raw = () => runRawChain(raw, steps, delayMs);
      if (sides.runner) {
        for (const variant of variants) {
          const workflow = engines[variant].parse(text, `${name}.yaml`);
          measured[variant] = async () => {
            const run = await timeEngineRun(engines[variant], workflow);
            if (run.record.steps.at(-1).outputs?.text !== 'x') throw new Error('the chain did not pass its text through');
            files[variant] ??= countRunFiles(run.record);
            return run;
          };
        }
      }
      const times = await measureInterleaved(measured, reps);
      const rawMs = times.raw?.ms ?? NaN;
      const perStep = (ms) => round((ms * 1000) / steps, 1);
      const describe = (variant) => ({
        runnerMs: round(times[variant]?.ms ?? NaN, 1),
        ratio: round(times[variant]?.ms / rawMs, 3),
        runnerUsPerStep: perStep(times[variant]?.ms),
        overheadUsPerStep: perStep(times[variant]?.ms - rawMs),
        runnerCpuUsPerStep: perStep(times[variant]?.cpuMs),
        filesPerRun: files[variant],
        runnerRunsMs: times[variant]?.runsMs,
      });
      const entry = {
        steps,
        delayMs,
        rawMs: round(rawMs, 1),
        rawUsPerStep: perStep(rawMs),
        rawCpuUsPerStep: perStep(times.raw?.cpuMs),
        rawRunsMs: times.raw?.runsMs,
        ...describe('runner'),
      };
      if (delayMs > 0) {
        const check = verdict(entry.ratio, RATIO_TARGET, 'max');
        Object.assign(entry, { target: RATIO_TARGET, met: check.met });
        say(`(a) chain ${steps} x ${delayMs} ms: runner ${entry.runnerMs} ms, raw ${entry.rawMs} ms, runner/raw ${entry.ratio} (${check.text})`);
      } else {
        const check = verdict(entry.overheadUsPerStep, OVERHEAD_TARGET_US, 'max');
        Object.assign(entry, { targetUs: OVERHEAD_TARGET_US, met: check.met });
        say(
          `(a) chain ${steps} x 0 ms: runner ${entry.runnerMs} ms (${entry.runnerUsPerStep} µs/step), raw ${entry.rawMs} ms (${entry.rawUsPerStep} µs/step): ` +
            `runner overhead ${entry.overheadUsPerStep} µs/step (${check.text})`,
        );
        if (engines.runnerRam) {
          entry.artifactsInRam = describe('runnerRam');
          say(`    diagnostic, artifacts on tmpfs instead of disk: runner ${entry.artifactsInRam.runnerMs} ms, overhead ${entry.artifactsInRam.overheadUsPerStep} µs/step`);
        }
      }
      say(`    CPU of this process per step: runner ${entry.runnerCpuUsPerStep} µs${entry.artifactsInRam ? ` (tmpfs: ${entry.artifactsInRam.runnerCpuUsPerStep} µs)` : ''}, raw ${entry.rawCpuUsPerStep} µs`);
      if (entry.filesPerRun) say(`    every run wrote run.json${entry.filesPerRun.runJson ? '' : ' (MISSING)'} and ${entry.filesPerRun.results} result.json files`);
      if (sides.raw && sides.runner) {
        const workflow = engines.runner.parse(chainWorkflowYaml(`${name}-pipe`, PIPE_STEPS, delayMs), `${name}-pipe.yaml`);
        const { outcome, ...runnerPipe } = await timePipe(() => timeEngineRun(engines.runner, workflow));
        if (outcome.record.status !== 'succeeded') throw new Error(`the pipe-timed chain ended ${outcome.record.status}`);
        const rawPipe = await timePipe(() => runRawChain(raw, PIPE_STEPS, delayMs));
        entry.pipe = { steps: PIPE_STEPS, runner: runnerPipe, raw: { requestToAnswerUs: rawPipe.requestToAnswerUs, answerToRequestUs: rawPipe.answerToRequestUs } };
        say(
          `    per step (medians of ${PIPE_STEPS}, timed at the pipe): request → answer runner ${runnerPipe.requestToAnswerUs} µs, raw ${rawPipe.requestToAnswerUs} µs; ` +
            `answer → next request runner ${runnerPipe.answerToRequestUs} µs, raw ${rawPipe.answerToRequestUs} µs`,
        );
      }
      result[`delay${delayMs}ms`] = entry;
    }
    return result;
  } finally {
    await raw.close();
    for (const engine of Object.values(engines)) await engine.close();
    disk.remove();
    ram?.remove();
  }
}
