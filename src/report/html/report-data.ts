import { existsSync, readdirSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { RunRecord } from '../../artifacts/run-record.js';
import { makeThumbnails, type Thumbnail } from './thumbnails.js';

/** Everything report.html shows, gathered from the run record and the run folder. */
export interface ReportData {
  /** The run record as people see it: secrets already shown as `***`. */
  record: RunRecord;
  /** When the report was written (ISO). */
  generatedAt: string;
  /** The apps' captured stderr, as paths relative to the run folder. */
  logs: { app: string; path: string }[];
  /** Small previews of saved images, by the file's absolute path. */
  thumbnails: Map<string, Thumbnail>;
}

/** Where to find the apps' logs, the artifacts folder's shared ones included (`serve`, `watch`, `cron`). */
export interface GatherOptions {
  /** The artifacts folder: runs started by triggers share their apps, whose logs are in `<artifacts>/.runner/logs`. */
  artifacts?: string;
  now?: () => number;
}

/** Reads what the report needs beside the record: the logs there are and thumbnails of the saved images. */
export async function gatherReportData(record: RunRecord, options: GatherOptions = {}): Promise<ReportData> {
  const files = record.steps.flatMap((step) => step.files).filter((file) => isInside(record.dir, file));
  return {
    record,
    generatedAt: new Date((options.now ?? Date.now)()).toISOString(),
    logs: findLogs(record, options.artifacts),
    thumbnails: await makeThumbnails(files),
  };
}

/** `<run>/logs/<app>.log`, or for a triggered run the shared `<artifacts>/.runner/logs/<app>.log` of its apps. */
function findLogs(record: RunRecord, artifacts: string | undefined): { app: string; path: string }[] {
  const own = join(record.dir, 'logs');
  const listed = listLogs(own);
  if (listed.length > 0) return listed.map((app) => ({ app, path: `logs/${app}.log` }));
  if (record.trigger.type === 'manual' || !artifacts) return [];
  const shared = join(artifacts, '.runner', 'logs');
  const apps = new Set(Object.keys(record.apps));
  return listLogs(shared)
    .filter((app) => apps.has(app))
    .map((app) => ({ app, path: relative(record.dir, join(shared, `${app}.log`)).split(sep).join('/') }));
}

function listLogs(folder: string): string[] {
  if (!existsSync(folder)) return [];
  try {
    return readdirSync(folder)
      .filter((name) => name.endsWith('.log'))
      .map((name) => name.slice(0, -4))
      .sort();
  } catch {
    return [];
  }
}

/** Whether `file` is inside `dir`: only files of the run get a preview or a link. */
export function isInside(dir: string, file: string): boolean {
  const inside = relative(dir, file);
  return inside !== '' && !inside.startsWith('..') && !isAbsolute(inside);
}
