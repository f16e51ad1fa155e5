import { hostname } from 'node:os';
import { join } from 'node:path';
import { killAllTracked } from '../../apps/child-reaper.js';
import { showPath } from '../../config/load.js';
import { ExitCode, RunnerError } from '../../errors.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { openCommandContext } from '../context.js';
import { onStopSignals } from '../stop-signals.js';

/** `--queue URL` reaches the config (as RUNNER_QUEUE_URL) before this runs. */
export type WorkerCommandOptions = GlobalOptions;

/**
 * `runner worker`: executes the call jobs of every app in the config from the
 * queue until SIGINT/SIGTERM, holding one connection per app. Exit 0 after a
 * clean stop (calls in flight finish first); 130 when Redis did not answer as it stopped.
 */
export async function workerCommand(options: WorkerCommandOptions, io: CliIO): Promise<number> {
  const context = await openCommandContext(options, io);
  const { config } = context;
  const url = config.queue;
  if (!url) throw new RunnerError('usage', 'runner worker needs a queue: set `queue: redis://...` in runner.config.yaml or pass --queue URL');
  const { startCallWorkers } = await import('../../queue/call-worker.js');
  const name = `${hostname()}-${process.pid}`;
  const lockMs = Number(io.env.RUNNER_WORKER_LOCK_MS);
  const redisGraceMs = Number(io.env.RUNNER_WORKER_REDIS_GRACE_MS);
  const workers = await startCallWorkers({
    url,
    config,
    apps: context.apps(join(config.artifacts, '.runner', 'workers', name)),
    limits: await context.limits(),
    clock: context.clock,
    ...(Number.isFinite(lockMs) && lockMs > 0 && { lockDurationMs: lockMs }),
    ...(Number.isFinite(redisGraceMs) && redisGraceMs >= 0 && { redisGraceMs }),
    onError: (error) => io.stderr(`worker: ${error.message}\n`),
  });
  // The handlers go in before the ready line: a supervisor (or a test) may signal as soon as it reads it,
  // and a SIGTERM that came first would end the process with the signal's default action.
  const stopped = new Promise<void>((resolve) => {
    onStopSignals((signal, count) => {
      if (count === 1) {
        io.stderr(`${signal}: finishing calls in flight (again to stop at once)\n`);
        resolve();
      } else {
        killAllTracked();
        process.exit(ExitCode.interrupted);
      }
    });
  });
  const appNames = Object.keys(config.apps);
  io.stderr(`worker ${name} ready: apps ${appNames.join(', ') || '(none)'} from ${config.file ? showPath(config.file, io.cwd) : 'no config'}\n`);
  await stopped;
  const clean = await workers.close();
  await context.close();
  // Redis did not answer (said on stderr): BullMQ's timers would keep waiting for it, and the process with them.
  if (!clean) process.exit(ExitCode.interrupted);
  return ExitCode.succeeded;
}
