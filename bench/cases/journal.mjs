// (e) What the call journal costs per step: (a)'s 1,000-step 0 ms chain run
// twice on one app (bench/apps/write-app.mjs), once calling its read-only
// `echo` (changes batched every 100 ms, nothing journaled) and once its
// `echo_write`, which is neither read-only nor idempotent, so every step
// commits an intent with an fsync before the send and its outcome after.
// The tools do the same thing with no I/O; the difference per step is the
// journal's cost. A figure, not a target.
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { connectRaw, runRawChain, verdictOf } from '../raw-client.mjs';
import { probeFsync } from '../lib/fsync-probe.mjs';
import { openEngine, timeEngineRun } from '../lib/engine.mjs';
import { measureInterleaved } from '../lib/interleave.mjs';
import { round, say } from '../lib/stats.mjs';
import { createWorkspace, faultyApp, tmpfsDir } from '../lib/workspace.mjs';

const writeApp = fileURLToPath(new URL('../apps/write-app.mjs', import.meta.url));

/**
 * A workspace whose config declares the `write` app next to `faulty`:
 * openEngine connects `faulty` (unused here), the chains call `write`.
 */
function createJournalWorkspace(options) {
  const workspace = createWorkspace(options);
  const app = (args) => `    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify(args)}\n`;
  workspace.write(
    'runner.config.yaml',
    `artifacts: ${JSON.stringify(workspace.artifacts)}\nconcurrency: 32\napps:\n  faulty:\n${app([faultyApp])}  write:\n${app([writeApp])}` +
      'policy:\n  read-only: allow\n  other: allow\n  open-world: allow\n',
  );
  return { ...workspace, app: { command: process.execPath, args: [writeApp] } };
}

/** (a)'s chain on `write.<tool>`: each step passes the previous step's text on. */
function chainYaml(name, count, tool) {
  const lines = [`name: ${name}`, 'steps:', '  - id: s0', `    uses: write.${tool}`, '    with: { text: "x" }'];
  for (let i = 1; i < count; i++) lines.push(`  - id: s${i}`, `    uses: write.${tool}`, `    with: { text: "\${{ steps.s${i - 1}.outputs.text }}" }`);
  return `${lines.join('\n')}\n`;
}

/** Journal entries of a finished run: how many, and how many have their outcome. */
function countJournal(artifacts, runId) {
  const db = new Database(`${artifacts}/.runner/runs.db`, { readonly: true });
  try {
    return db.prepare(`SELECT count(*) AS entries, count(outcome) AS settled FROM journal WHERE run_id = ?`).get(runId);
  } finally {
    db.close();
  }
}

export async function benchJournal({ reps, steps = 1000, sides }) {
  const disk = createJournalWorkspace();
  // Diagnostic only: the same runs with the store on tmpfs, where an fsync costs nothing.
  const ram = tmpfsDir ? createJournalWorkspace({ tmpfs: true }) : null;
  const engines = { disk: await openEngine(disk), ...(ram && { ram: await openEngine(ram) }) };
  for (const engine of Object.values(engines)) await engine.apps.get('write');
  const probe = await connectRaw(disk.app);
  const prior = verdictOf(probe);
  await probe.close();
  const raw = await connectRaw(disk.app, prior, { listTools: true });
  const journal = {};
  try {
    const result = { steps, fsyncUs: { disk: probeFsync(disk.dir), ...(ram && { ram: probeFsync(ram.artifacts) }) } };
    say(`(e) one 4 KiB append + fsync now costs ${result.fsyncUs.disk} µs on the workspace disk${ram ? `, ${result.fsyncUs.ram} µs on tmpfs` : ''}`);
    const measured = {};
    if (sides.raw) {
      measured.raw = () => runRawChain(raw, steps, 0);
      measured.rawWrite = async () => {
        const started = performance.now();
        let text = 'x';
        for (let i = 0; i < steps; i++) text = (await raw.callTool({ name: 'echo_write', arguments: { text } })).structuredContent.text;
        return performance.now() - started;
      };
    }
    if (sides.runner) {
      for (const [where, engine] of Object.entries(engines)) {
        for (const tool of ['echo', 'echo_write']) {
          const name = `${tool === 'echo' ? 'safe' : 'journaled'}${where === 'ram' ? 'Ram' : ''}`;
          const workflow = engine.parse(chainYaml(`journal-${name.toLowerCase()}`, steps, tool), `${name}.yaml`);
          measured[name] = async () => {
            const run = await timeEngineRun(engine, workflow);
            if (run.record.steps.at(-1).outputs?.text !== 'x') throw new Error('the chain did not pass its text through');
            journal[name] ??= countJournal(engine.config.artifacts, run.record.id);
            return run;
          };
        }
      }
    }
    const times = await measureInterleaved(measured, reps);
    const perStep = (ms) => round((ms * 1000) / steps, 1);
    const describe = (name) => ({
      runnerMs: round(times[name]?.ms ?? NaN, 1),
      runnerUsPerStep: perStep(times[name]?.ms ?? NaN),
      runnerCpuUsPerStep: perStep(times[name]?.cpuMs ?? NaN),
      journal: journal[name],
      runnerRunsMs: times[name]?.runsMs,
    });
    Object.assign(result, {
      rawUsPerStep: perStep(times.raw?.ms ?? NaN),
      rawWriteUsPerStep: perStep(times.rawWrite?.ms ?? NaN),
      rawCpuUsPerStep: perStep(times.raw?.cpuMs ?? NaN),
      rawRunsMs: times.raw?.runsMs,
      safe: describe('safe'),
      journaled: describe('journaled'),
    });
    result.journalUsPerStep = round(result.journaled.runnerUsPerStep - result.safe.runnerUsPerStep, 1);
    result.journalCpuUsPerStep = round(result.journaled.runnerCpuUsPerStep - result.safe.runnerCpuUsPerStep, 1);
    say(
      `(e) chain ${steps} x 0 ms on one app: journaled (echo_write) ${result.journaled.runnerUsPerStep} µs/step, safe (echo) ${result.safe.runnerUsPerStep} µs/step: ` +
        `the journal costs ${result.journalUsPerStep} µs/step (CPU ${result.journalCpuUsPerStep} µs/step)`,
    );
    say(`    raw client for scale: echo ${result.rawUsPerStep} µs/step, echo_write ${result.rawWriteUsPerStep} µs/step; CPU per step runner journaled ${result.journaled.runnerCpuUsPerStep} µs, safe ${result.safe.runnerCpuUsPerStep} µs, raw ${result.rawCpuUsPerStep} µs`);
    if (engines.ram && sides.runner) {
      result.storeInRam = { safe: describe('safeRam'), journaled: describe('journaledRam') };
      result.storeInRam.journalUsPerStep = round(result.storeInRam.journaled.runnerUsPerStep - result.storeInRam.safe.runnerUsPerStep, 1);
      say(
        `    diagnostic, artifacts and store on tmpfs: journaled ${result.storeInRam.journaled.runnerUsPerStep} µs/step, safe ${result.storeInRam.safe.runnerUsPerStep} µs/step, ` +
          `journal ${result.storeInRam.journalUsPerStep} µs/step`,
      );
    }
    for (const [name, counted] of Object.entries(journal)) {
      const expected = name.startsWith('journaled') ? steps : 0;
      if (counted.entries !== expected || counted.settled !== expected) say(`    ${name}: UNEXPECTED journal: ${JSON.stringify(counted)}, expected ${expected} settled entries`);
    }
    if (journal.journaled) say(`    journal entries per run: journaled ${journal.journaled.settled} settled of ${journal.journaled.entries}, safe ${journal.safe?.entries}`);
    return result;
  } finally {
    await raw.close();
    for (const engine of Object.values(engines)) await engine.close();
    disk.remove();
    ram?.remove();
  }
}
