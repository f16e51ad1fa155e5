// The runner side of (a) and (b), driven through its programmatic API from
// dist/: the same executeRun the CLI's `runner run` uses, with the app already
// connected, so neither side's figure includes process start or app spawn.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { importDist } from './dist.mjs';

const { AppRegistry } = await importDist('apps/registry.js');
const { loadConfig } = await importDist('config/load.js');
const { executeRun } = await importDist('scheduler/executor.js');
const { Limits } = await importDist('scheduler/limits.js');
const { parseWorkflowText } = await importDist('workflow/load.js');

/**
 * Loads the workspace's config and connects its `faulty` app (spawn, era
 * handshake, tools/list) before any timing starts. One registry and one
 * Limits serve every run, as in `runner serve`.
 */
export async function openEngine(workspace) {
  const config = await loadConfig({ cwd: workspace.dir, env: process.env });
  const apps = new AppRegistry({ config, logDir: join(config.artifacts, 'bench-logs') });
  await apps.get('faulty');
  const limits = new Limits(config);
  return {
    config,
    apps,
    limits,
    /** Validates workflow text against this config (untimed: (d) measures parsing). */
    parse: (text, file) => parseWorkflowText(text, file, config),
    close: () => apps.closeAll(),
  };
}

/**
 * Runs a parsed workflow once through executeRun and times it (wall and this
 * process's CPU): steps, calls, result.json per call, run.json throttled while
 * running and final at the end. Throws unless the run succeeded.
 */
export async function timeEngineRun(engine, workflow, inputs = {}) {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const record = await executeRun({
    workflow,
    config: engine.config,
    apps: engine.apps,
    limits: engine.limits,
    inputs,
    policy: { yes: false, allow: [] },
    env: process.env,
  });
  const ms = performance.now() - started;
  const cpuMs = cpuMsSince(cpuBefore);
  if (record.status !== 'succeeded') {
    const failed = record.steps.find((step) => step.status !== 'succeeded');
    throw new Error(`bench run ${record.id} ${record.status}: ${failed?.id} ${JSON.stringify(failed?.error)}`);
  }
  return { ms, cpuMs, record };
}

/** User + system CPU of this process (all its threads) since `before`, in ms. */
export function cpuMsSince(before) {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Counts the files the contract asks for in a finished run folder: run.json and result.json per call. */
export function countRunFiles(record) {
  let results = 0;
  for (const step of record.steps) {
    const stepDir = join(record.dir, step.id);
    if (step.items) {
      for (const entry of readdirSync(stepDir)) if (existsSync(join(stepDir, entry, 'result.json'))) results++;
    } else if (existsSync(join(stepDir, 'result.json'))) {
      results++;
    }
  }
  return { runJson: existsSync(join(record.dir, 'run.json')), results };
}
