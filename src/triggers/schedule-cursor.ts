import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { STATE_FOLDER } from './excluded-paths.js';
import { writeFileAtomic } from '../artifacts/atomic-file.js';

/** The key of one `on.schedule` entry: a changed expression or zone starts afresh. */
export function scheduleKey(index: number, cron: string, timezone: string | undefined): string {
  return `${index}|${cron}|${timezone ?? 'local'}`;
}

/**
 * The last handled occurrence of each schedule, persisted in
 * `<artifacts>/.runner/schedules/<workflow>.json`, so that a restart knows how
 * long the runner was down. Writes are atomic, one at a time per file (those
 * queued meanwhile go out together) and only ever move a cursor forward,
 * even when several runner processes write the same file.
 */
export class ScheduleCursorStore {
  private readonly folder: string;
  private readonly pending = new Map<string, Map<string, number>>();
  private readonly writing = new Map<string, Promise<void>>();

  constructor(artifacts: string) {
    this.folder = join(artifacts, STATE_FOLDER, 'schedules');
  }

  /** The last handled occurrence (ms), or undefined when this schedule never fired here. */
  async read(workflow: string, key: string): Promise<number | undefined> {
    const value = (await this.readFile(workflow))[key];
    const ms = typeof value === 'string' ? Date.parse(value) : NaN;
    return Number.isNaN(ms) ? undefined : ms;
  }

  /** Records `scheduledMs` as handled; resolves when it is on disk. */
  write(workflow: string, key: string, scheduledMs: number): Promise<void> {
    const pending = this.pending.get(workflow) ?? new Map<string, number>();
    pending.set(key, Math.max(scheduledMs, pending.get(key) ?? 0));
    this.pending.set(workflow, pending);
    // One write per file at a time; a write queued behind another finds its value already written.
    const next = (this.writing.get(workflow) ?? Promise.resolve()).then(() => this.flush(workflow));
    this.writing.set(workflow, next.catch(() => undefined));
    return next;
  }

  private async flush(workflow: string): Promise<void> {
    const updates = this.pending.get(workflow);
    if (!updates) return;
    this.pending.delete(workflow);
    const data = await this.readFile(workflow);
    for (const [key, ms] of updates) {
      const known = typeof data[key] === 'string' ? Date.parse(data[key]) : NaN;
      if (Number.isNaN(known) || ms > known) data[key] = new Date(ms).toISOString();
    }
    writeFileAtomic(this.fileOf(workflow), JSON.stringify(data, null, 2) + '\n');
  }

  private async readFile(workflow: string): Promise<Record<string, string>> {
    try {
      const data = JSON.parse(await readFile(this.fileOf(workflow), 'utf8')) as unknown;
      return data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, string>) : {};
    } catch {
      return {};
    }
  }

  private fileOf(workflow: string): string {
    return join(this.folder, `${workflow}.json`);
  }
}
