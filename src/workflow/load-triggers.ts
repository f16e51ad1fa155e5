// The `on:` part of a workflow file: watch and schedule triggers, checked and normalized.
import { homedir } from 'node:os';
import { isAbsolute, relative, resolve } from 'node:path';
import { parseDuration } from '../config/durations.js';
import { locatePath } from '../config/yaml-source.js';
import { checkCronExpression, checkTimezone, CRON_EXPECTED } from './cron-syntax.js';
import { isRecord } from '../is-record.js';
import type { LoadContext as Context } from './load-context.js';
import type { RawWorkflow } from './schema.js';
import type { ScheduleTrigger, WatchTrigger } from './types.js';

/** Debounce of `on.watch` when the workflow does not say. */
export const DEFAULT_DEBOUNCE_MS = 300;

export function normalizeWatch(watch: NonNullable<NonNullable<RawWorkflow['on']>['watch']>, context: Context): WatchTrigger {
  const paths = (watch.paths ?? []).map((glob, index) => expandHome(glob, index, context));
  paths.forEach((glob, index) => checkWatchPath(glob, index, context));
  return {
    paths,
    events: watch.events ?? ['add'],
    debounceMs: typeof watch.debounce === 'string' ? (parseDuration(watch.debounce) ?? 0) : DEFAULT_DEBOUNCE_MS,
    ...(watch.claim !== undefined && { claim: watch.claim }),
    location: locatePath(context.source, ['on', 'watch'], 'key'),
  };
}

export function normalizeSchedules(context: Context): ScheduleTrigger[] {
  const schedules = context.raw.on?.schedule;
  if (!Array.isArray(schedules)) return [];
  schedules.forEach((schedule, i) => checkSchedule(schedule, i, context));
  return schedules.flatMap((schedule, i) =>
    isRecord(schedule)
      ? [
          {
            cron: schedule.cron!,
            ...(schedule.timezone !== undefined && { timezone: schedule.timezone }),
            overlap: schedule.overlap ?? 'skip',
            catchUp: schedule['catch-up'] ?? 'one',
            location: locatePath(context.source, ['on', 'schedule', i]),
          },
        ]
      : [],
  );
}

// `~`, `~/...`, `$HOME` and `${HOME}` (then `/` or the end): what shells expand at the start of a path.
const HOME_PREFIX = /^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/;
const VARIABLE = /\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^}]*\})/;

/**
 * A watch glob with the home folder at its start expanded: `~/inbox/*.pdf`
 * becomes an absolute path (which serve logs as outside the project). Any
 * other variable is refused: a glob is not a shell word, and a variable that
 * is unset (or set differently under a service manager) would silently watch
 * another folder.
 */
function expandHome(glob: string, index: number, context: Context): string {
  const home = HOME_PREFIX.exec(glob);
  const rest = home ? glob.slice(home[0].length) : glob;
  const variable = VARIABLE.exec(rest) ?? /^~[^/]+/.exec(rest);
  if (variable) {
    context.diagnostics.push({
      location: locatePath(context.source, ['on', 'watch', 'paths', index]),
      message: `watch path \`${glob}\` uses \`${variable[0]}\`, which is not expanded`,
      hint: 'only `~`, `$HOME` and `${HOME}` at the start of a watch path expand (to your home folder); write other folders as paths, relative to the config folder or absolute',
    });
  }
  return home ? `${homedir().replaceAll('\\', '/')}${rest}` : glob;
}

/**
 * A relative watch glob stays inside the config folder: `../../etc/*` would
 * watch, and with `claim: move` move, files anywhere. A folder outside the
 * project is watched only when written as an absolute path (serve logs it).
 */
function checkWatchPath(glob: string, index: number, context: Context): void {
  if (isAbsolute(glob)) return;
  const segments = glob.split('/');
  const firstWild = segments.findIndex((segment) => /[*?[{]/.test(segment));
  const base = resolve(context.config.dir, ...segments.slice(0, firstWild === -1 ? segments.length : firstWild));
  const inside = relative(context.config.dir, base);
  if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) return;
  context.diagnostics.push({
    location: locatePath(context.source, ['on', 'watch', 'paths', index]),
    message: `watch path \`${glob}\` reaches outside the config folder (${context.config.dir})`,
    hint: 'watch paths are relative to the config folder; to watch a folder outside the project, write its absolute path',
  });
}

/** A bad cron expression or time zone is a load-time error at its value, not a surprise at the first fire. */
function checkSchedule(schedule: unknown, index: number, context: Context): void {
  if (!isRecord(schedule)) return;
  const path = ['on', 'schedule', index];
  if (typeof schedule.cron === 'string') {
    const problem = checkCronExpression(schedule.cron);
    if (problem) {
      context.diagnostics.push({
        location: locatePath(context.source, [...path, 'cron']),
        message: `invalid cron expression \`${schedule.cron}\` in \`on.schedule[${index}]\`: ${problem}`,
        expected: CRON_EXPECTED,
      });
    }
  }
  if (typeof schedule.timezone === 'string') {
    const problem = checkTimezone(schedule.timezone);
    if (problem) {
      context.diagnostics.push({
        location: locatePath(context.source, [...path, 'timezone']),
        message: `invalid \`timezone\` in \`on.schedule[${index}]\`: ${problem}`,
        hint: 'use a name from the IANA time zone database, like Europe/Berlin, America/New_York or UTC',
      });
    }
  }
}
