import { randomBytes } from 'node:crypto';

/** A run id that sorts by time: `20261130-083349-123-a1b2` (UTC, ms, random suffix). */
export function createRunId(nowMs: number): string {
  const iso = new Date(nowMs).toISOString(); // 2026-11-30T08:33:49.123Z
  const stamp = `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${iso.slice(20, 23)}`;
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}

/** What createRunId produces: used to recognize run folders (`<artifacts>/<workflow>/<run-id>/`). */
export const RUN_ID_PATTERN = /^\d{8}-\d{6}-\d{3}-[0-9a-f]{4}$/;
