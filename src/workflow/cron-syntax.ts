import { createRequire } from 'node:module';
import type { Cron } from 'croner';
import { messageOf } from '../errors.js';

// croner is loaded on the first cron expression, not with every workflow: most runs have none.
const require = createRequire(import.meta.url);
let CronClass: typeof Cron | undefined;
const cronClass = (): typeof Cron => (CronClass ??= (require('croner') as typeof import('croner')).Cron);

// Cron expressions as workflows write them, read by croner the same way at
// load time (validation) and at run time (scheduling): five fields, or six
// with seconds first; a day-of-month and a day-of-week both restricted mean
// either one, as in Vixie cron; nicknames like @daily are accepted.

/** What a cron expression looks like, for messages. */
export const CRON_EXPECTED = 'five fields (minute hour day-of-month month day-of-week) or six with seconds first, like "0 9 * * 1-5"';

/** A fixed date to probe whether an expression ever fires: validation must not depend on today's date. */
const PROBE_DATE = new Date(Date.UTC(2000, 0, 1));

/** Croner for `expression` in `timezone` (IANA; default: the local zone). Never starts a timer. Throws on a bad expression. */
export function compileCron(expression: string, timezone?: string): Cron {
  return new (cronClass())(expression, { mode: '5-or-6-parts', domAndDow: false, ...(timezone !== undefined && { timezone }) });
}

/** Why `expression` is not a valid cron expression; undefined when it is. */
export function checkCronExpression(expression: string): string | undefined {
  let cron: Cron;
  try {
    cron = compileCron(expression);
  } catch (error) {
    return describeCronError(error);
  }
  return cron.nextRun(PROBE_DATE) === null ? 'it never fires (no date matches every field)' : undefined;
}

/** Why `timezone` is not an IANA time zone; undefined when it is one. */
export function checkTimezone(timezone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return undefined;
  } catch {
    return `\`${timezone}\` is not an IANA time zone`;
  }
}

function describeCronError(error: unknown): string {
  const message = messageOf(error);
  return message
    .replace(/^CronPattern: /, '')
    .replace(/mode '5-or-6-parts' requires exactly 5 or 6 parts, but pattern '.*' has (\d+) parts\./, 'it has $1 fields')
    .replace(/invalid configuration format \('.*'\), exactly .*/, 'it needs 5 or 6 fields separated by spaces')
    .replace(/configuration entry \d+ \((.*)\)/, 'field `$1`')
    .replace(/\.$/, '');
}
