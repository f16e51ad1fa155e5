// (h) Queue mode: the same short calls sent through BullMQ on Redis to 1, 2
// and 4 `runner worker` processes, against the in-process dispatcher and the
// raw SDK client, in the same run. Two shapes: a foreach of `calls` items
// (throughput) and a sequential chain of `chainSteps` steps (per-call
// overhead: each call waits for the one before, so the queue's round trip is
// on the clock every time). Redis is started by the bench on a free port.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { importDist } from '../lib/dist.mjs';
import { cpuMsSince, openEngine } from '../lib/engine.mjs';
import { measureInterleaved } from '../lib/interleave.mjs';
import { measureBullmqFloor } from '../lib/bullmq-floor.mjs';
import { startRedisServer } from '../lib/redis-server.mjs';
import { round, say } from '../lib/stats.mjs';
import { cleanUpAtExit } from '../lib/cleanup.mjs';
import { chainWorkflowYaml, cliPath, createWorkspace, foreachWorkflowYaml } from '../lib/workspace.mjs';
import { connectRaw, runRawChain, runRawFanout, verdictOf } from '../raw-client.mjs';

const { executeRun } = await importDist('scheduler/executor.js');
const { QueueDispatcher } = await importDist('queue/queue-dispatcher.js');
const { openRunStore } = await importDist('store/run-history.js');

export async function benchQueue({ reps, calls = 2000, chainSteps = 200, inFlight = 32, delayMs = 5, workerCounts = [1, 2, 4], sides }) {
  // The persistence docs/run-store-redis.md asks for; RUNNER_BENCH_APPENDFSYNC=everysec shows what its fsyncs cost.
  const appendfsync = process.env.RUNNER_BENCH_APPENDFSYNC ?? 'always';
  const redis = await startRedisServer({ args: ['--appendonly', 'yes', '--appendfsync', appendfsync] });
  const local = createWorkspace({ concurrency: inFlight });
  const queued = createWorkspace({ concurrency: inFlight });
  appendFileSync(join(queued.dir, 'runner.config.yaml'), `queue: ${redis.url}\n`);
  const localEngine = await openEngine(local);
  // The coordinator: the engine of `runner run --queue` (it still reads the tool list from its own app
  // connection), one dispatcher and one Redis run store shared by every run, as in `runner serve`.
  const queueEngine = await openEngine(queued);
  const dispatcher = new QueueDispatcher(redis.url, queueEngine.config);
  const store = openRunStore({ artifacts: queueEngine.config.artifacts, queue: redis.url });
  const probe = await connectRaw(local.app);
  const prior = verdictOf(probe);
  await probe.close();
  const raw = await connectRaw(local.app, prior, { listTools: true });
  let workers = [];
  const items = Array.from({ length: calls }, (_, i) => i);
  const shapes = {
    fanout: {
      text: foreachWorkflowYaml('queue-fanout', inFlight, delayMs),
      inputs: { items },
      raw: () => runRawFanout(raw, calls, inFlight, delayMs),
      count: calls,
    },
    chain: { text: chainWorkflowYaml('queue-chain', chainSteps, 0), inputs: {}, raw: () => runRawChain(raw, chainSteps, 0), count: chainSteps },
  };
  try {
    const result = { calls, chainSteps, inFlight, delayMs, redis: `appendonly yes, appendfsync ${appendfsync}` };
    // What any call through BullMQ pays on this machine, measured on the same Redis: the floor of the figures below.
    result.bullmqFloor = await measureBullmqFloor(redis.url);
    say(`(h) BullMQ alone, add → finished, one job at a time, worker in another process: median ${result.bullmqFloor.medianUs} µs, mean ${result.bullmqFloor.meanUs} µs, p90 ${result.bullmqFloor.p90Us} µs`);
    for (const count of workerCounts) {
      await Promise.all(workers.map(stopWorker));
      workers = await Promise.all(Array.from({ length: count }, () => startWorker(queued)));
      const entry = {};
      for (const [name, shape] of Object.entries(shapes)) {
        const measured = {};
        if (sides.raw) measured.raw = shape.raw;
        if (sides.runner) {
          const localWorkflow = localEngine.parse(shape.text, `${name}.yaml`);
          const queueWorkflow = queueEngine.parse(shape.text, `${name}.yaml`);
          measured.inProcess = () => timeRun(localEngine, localWorkflow, shape.inputs);
          measured.queue = () => timeRun(queueEngine, queueWorkflow, shape.inputs, { dispatch: dispatcher.dispatch, store });
        }
        const times = await measureInterleaved(measured, reps);
        const perCallUs = (ms) => round((ms * 1000) / shape.count, 1);
        const perSecond = (ms) => round((shape.count * 1000) / ms, 0);
        entry[name] = {
          queueMs: round(times.queue?.ms, 1),
          inProcessMs: round(times.inProcess?.ms, 1),
          rawMs: round(times.raw?.ms, 1),
          queueCallsPerS: perSecond(times.queue?.ms),
          inProcessCallsPerS: perSecond(times.inProcess?.ms),
          rawCallsPerS: perSecond(times.raw?.ms),
          queueUsPerCall: perCallUs(times.queue?.ms),
          overheadVsInProcessUsPerCall: perCallUs(times.queue?.ms - times.inProcess?.ms),
          overheadVsRawUsPerCall: perCallUs(times.queue?.ms - times.raw?.ms),
          // The overhead over in-process that is runner's own: less BullMQ's mean round trip.
          runnerShareUsPerCall: round(perCallUs(times.queue?.ms - times.inProcess?.ms) - result.bullmqFloor.meanUs, 1),
          queueCpuUsPerCall: perCallUs(times.queue?.cpuMs),
          queueRunsMs: times.queue?.runsMs,
        };
      }
      const { fanout, chain } = entry;
      say(
        `(h) ${count} worker${count > 1 ? 's' : ''}: foreach ${calls} x ${delayMs} ms, ${inFlight} in flight: queue ${fanout.queueCallsPerS} calls/s, ` +
          `in-process ${fanout.inProcessCallsPerS}, raw ${fanout.rawCallsPerS}`,
      );
      say(
        `    chain ${chainSteps} x 0 ms: queue ${chain.queueUsPerCall} µs/call, overhead ${chain.overheadVsInProcessUsPerCall} µs/call over in-process, ` +
          `${chain.overheadVsRawUsPerCall} µs/call over raw; runner's own share ${chain.runnerShareUsPerCall} µs/call beyond BullMQ's mean (coordinator CPU ${chain.queueCpuUsPerCall} µs/call)`,
      );
      result[`workers${count}`] = entry;
    }
    return result;
  } finally {
    await Promise.all(workers.map(stopWorker));
    await raw.close();
    await dispatcher.close();
    store.close();
    await localEngine.close();
    await queueEngine.close();
    await redis.stop();
    local.remove();
    queued.remove();
  }
}

/** executeRun once, timed (wall and this process's CPU); throws unless the run succeeded. */
async function timeRun(engine, workflow, inputs, extra = {}) {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const record = await executeRun({ workflow, config: engine.config, apps: engine.apps, limits: engine.limits, inputs, policy: { yes: false, allow: [] }, env: process.env, ...extra });
  const ms = performance.now() - started;
  if (record.status !== 'succeeded') throw new Error(`bench run ${record.id} ${record.status}`);
  return { ms, cpuMs: cpuMsSince(cpuBefore) };
}

/** A `runner worker` process on the workspace's config; resolves once it says it is ready. */
function startWorker(workspace) {
  const child = spawn(process.execPath, [cliPath, 'worker'], { cwd: workspace.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const forget = cleanUpAtExit(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  child.once('exit', forget);
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes(' ready: ')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`runner worker exited (${code}) before it was ready:\n${stderr}`)));
  });
}

function stopWorker(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => (clearTimeout(timer), resolve()));
    child.kill('SIGTERM');
  });
}
