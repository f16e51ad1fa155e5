import { killAllTracked } from '../../apps/child-reaper.js';
import { showPath } from '../../config/load.js';
import { DURATION_EXPECTED, parseDuration } from '../../config/durations.js';
import { ExitCode, RunnerError } from '../../errors.js';
import { formatMs } from '../../config/durations.js';
import { maskSecrets } from '../../secrets.js';
import { loadTriggeredWorkflows, type TriggerKind } from '../../triggers/discover.js';
import type { ServiceEvent } from '../../triggers/events.js';
import { TriggerService } from '../../triggers/service.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { openCommandContext } from '../context.js';
import { reportWarnings } from '../report-error.js';
import { onStopSignals } from '../stop-signals.js';
import { jsonForOutput } from '../../terminal-text.js';

export type ServeMode = 'watch' | 'cron' | 'serve';

export interface ServeCommandOptions extends GlobalOptions {
  initial?: boolean;
  grace: string;
  json?: boolean;
  yes?: boolean;
  allow: string[];
}

const KINDS: Record<ServeMode, TriggerKind[]> = { watch: ['watch'], cron: ['schedule'], serve: ['watch', 'schedule'] };

/**
 * `runner watch|cron|serve [WORKFLOW...]`: one long-lived process until
 * SIGINT/SIGTERM. Exit 0, or 130 when runs had to be cancelled at the end of
 * the grace period. Never prompts: with no one to answer, `ask` is `deny`
 * unless `--yes` or `--allow` says otherwise.
 */
export async function serveCommand(mode: ServeMode, files: string[], options: ServeCommandOptions, io: CliIO): Promise<number> {
  const graceMs = parseDuration(options.grace);
  if (graceMs === undefined) throw new RunnerError('usage', `\`--grace\`: expected ${DURATION_EXPECTED}, got \`${options.grace}\``);
  const context = await openCommandContext(options, io);
  const { config } = context;
  const kinds = KINDS[mode];
  const { served, skipped } = await loadTriggeredWorkflows({ files, config, cwd: io.cwd, kinds, env: io.env });
  reportWarnings(served.flatMap((workflow) => workflow.warnings ?? []), io.stderr);
  const report = createReporter(io, Boolean(options.json), config.secretValues);
  // How often waiting runs are looked up for answers given elsewhere, and for expiry.
  const approvalPollMs = Number(io.env.RUNNER_APPROVAL_POLL_MS);

  const service = new TriggerService({
    context,
    workflows: served,
    triggers: { watch: kinds.includes('watch'), schedule: kinds.includes('schedule') },
    initial: Boolean(options.initial),
    policy: { yes: Boolean(options.yes), allow: options.allow },
    env: io.env,
    onEvent: report,
    ...(Number.isFinite(approvalPollMs) && approvalPollMs > 0 && { approvalPollMs }),
  });

  let stopped: Promise<{ cancelled: number }> | undefined;
  let resolveSignalled!: () => void;
  const signalled = new Promise<void>((resolve) => (resolveSignalled = resolve));
  const removeSignalHandlers = onStopSignals((signal, signals) => {
    if (signals === 1) {
      stopped = service.stop(signal, graceMs);
      resolveSignalled();
    } else if (signals === 2) {
      io.stderr(`${signal} again: cancelling runs in flight now (once more to exit at once)\n`);
      service.cancelNow();
    } else {
      killAllTracked();
      process.exit(ExitCode.interrupted);
    }
  });
  try {
    try {
      await service.start();
    } catch (error) {
      await service.stop('startup failed', 0);
      throw error;
    }
    if (skipped.length > 0) {
      const trigger = mode === 'serve' ? 'watch or schedule' : mode === 'watch' ? 'watch' : 'schedule';
      io.stderr(`not served (no ${trigger} trigger): ${skipped.map((workflow) => workflow.name).join(', ')}\n`);
    }
    await signalled;
    const { cancelled } = await stopped!;
    return cancelled > 0 ? ExitCode.interrupted : ExitCode.succeeded;
  } finally {
    removeSignalHandlers();
  }
}

/** Events → one line each on stderr, and with `--json` one JSON object each on stdout. */
function createReporter(io: CliIO, json: boolean, secretValues: readonly string[]): (event: ServiceEvent) => void {
  const show = (path: string) => showPath(path, io.cwd);
  const line = (text: string) => io.stderr(text + '\n');
  return (raw) => {
    const event = maskEvent(raw, secretValues);
    if (json) io.stdout(jsonForOutput({ time: new Date().toISOString(), ...event }, 0));
    switch (event.type) {
      case 'ready': {
        line(`serving ${event.workflows.length} workflow${event.workflows.length === 1 ? '' : 's'} (Ctrl-C to stop):`);
        for (const workflow of event.workflows) {
          for (const glob of workflow.watch ?? []) line(`  ${workflow.name}: watch ${glob}`);
          for (const schedule of workflow.schedules ?? []) {
            line(`  ${workflow.name}: cron "${schedule.cron}"${schedule.timezone ? ` ${schedule.timezone}` : ''}, next ${schedule.next ?? 'never'}`);
          }
        }
        break;
      }
      case 'trigger': {
        const what = event.trigger.type === 'watch' ? `${event.trigger.event} ${show(event.trigger.source)}` : `${event.trigger.occurrence}${event.trigger.catchUp ? ' (catch-up)' : ''}`;
        if (event.action === 'run') line(`⚡ ${event.workflow}: ${what} → run ${event.runId}`);
        else line(`${event.action === 'queued' ? '⏸' : '⏭'} ${event.workflow}: ${what} ${event.action}: ${event.reason ?? ''}`);
        break;
      }
      case 'run-finished': {
        const symbol = event.status === 'succeeded' ? '✔' : event.status === 'cancelled' ? '■' : event.status === 'waiting' ? '⏸' : '✖';
        line(`${symbol} ${event.workflow}: ${event.summary}${event.movedTo ? ` → ${show(event.movedTo)}` : ''}`);
        break;
      }
      case 'missed':
        line(
          `⚠ ${event.workflow}: ${event.count} occurrence${event.count === 1 ? '' : 's'} of "${event.cron}" missed while the runner was down or asleep` +
            (event.catchUp === 'one' ? ' (catch-up: one runs the latest)' : ' (catch-up: none)'),
        );
        break;
      case 'recovered': {
        const what =
          event.action === 'resumed' ? `resuming run ${event.runId}` : event.action === 'triggered' ? `running ${show(event.path ?? '')}` : `${show(event.path ?? '')} released`;
        line(`↺ ${event.workflow}: ${what}: ${event.reason}`);
        break;
      }
      case 'answered': {
        const answers = event.steps.map((step) => `${step.id} ${step.decision}${step.by ? ` by ${step.by}` : ''}`).join(', ');
        line(`↺ ${event.workflow}: continuing run ${event.runId}: ${answers}`);
        break;
      }
      case 'warning':
        line(`⚠ ${event.workflow ? `${event.workflow}: ` : ''}${event.message}`);
        break;
      case 'lock-drift':
        line(
          event.stops
            ? `✖ ${event.workflow}: its tools changed since ${show(event.file)} was written; its runs do not start until \`runner lock --update\` accepts the changes (reported once):\n${event.diff}`
            : `⚠ ${event.workflow}: ${show(event.file)}: changes that stop nothing:\n${event.diff}`,
        );
        break;
      case 'stopping':
        line(
          `${event.reason}: stopped triggering` +
            (event.dropped > 0 ? `, dropped ${event.dropped} queued run${event.dropped === 1 ? '' : 's'}` : '') +
            (event.inFlight > 0 ? `; waiting up to ${formatMs(event.graceMs)} for ${event.inFlight} run${event.inFlight === 1 ? '' : 's'} in flight (again to cancel now)` : ''),
        );
        break;
      case 'cancelling':
        line(`cancelling ${event.runs.length} run${event.runs.length === 1 ? '' : 's'}: ${event.runs.join(', ')}`);
        break;
      case 'stopped':
        line(event.cancelled > 0 ? `stopped; ${event.cancelled} run${event.cancelled === 1 ? ' was' : 's were'} cancelled` : 'stopped');
        break;
      case 'run-refused':
        line(`■ ${event.workflow}: run ${event.runId} not started: ${event.reason}`);
        break;
      case 'run-started':
        break; // the trigger line already names the run
    }
  };
}

/**
 * An event with secrets masked in its values (messages, reasons, file paths)
 * and never in the runner's own fields: run ids, folders, statuses, names.
 */
function maskEvent(event: ServiceEvent, secretValues: readonly string[]): ServiceEvent {
  if (secretValues.length === 0) return event;
  const mask = (text: string) => maskSecrets(text, secretValues);
  const masked = { ...event } as Record<string, unknown>;
  for (const key of ['message', 'reason', 'path', 'diff']) if (typeof masked[key] === 'string') masked[key] = mask(masked[key]);
  if ('trigger' in event && event.trigger.type === 'watch') {
    masked.trigger = { ...event.trigger, path: mask(event.trigger.path), source: mask(event.trigger.source) };
  }
  return masked as ServiceEvent;
}
