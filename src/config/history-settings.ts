import { dirname, resolve } from 'node:path';
import { parseDuration } from './durations.js';
import { QUEUE_URL_ENV } from './queue-url.js';
import { findConfigFile, type LoadConfigOptions } from './find-config.js';
import type { RetentionPolicy } from './types.js';
import { parseLaidOutYaml } from './yaml-layout.js';
import { readSourceFile } from './yaml-source.js';

/** What the history commands (`runs`, `runs show`, `runs prune`, `logs`) need of the config. */
export interface HistorySettings {
  artifacts: string;
  retention: RetentionPolicy;
  /** Queue mode's redis:// URL: the run history is in Redis. */
  queue?: string;
  /** The config folder. */
  dir: string;
}

/**
 * Reads only `artifacts` and `retention` from the config, without validating
 * the rest (apps, policy): looking at history stays fast, and works while an
 * app's entry is being fixed. When those two keys are not plainly valid, the
 * full loader runs and reports them the way every command does.
 */
export async function loadHistorySettings(options: LoadConfigOptions): Promise<HistorySettings> {
  const file = await findConfigFile(options);
  const dir = file === null ? resolve(options.cwd) : dirname(file);
  let raw: unknown;
  try {
    // The full loader's reading and parsing, with its bounds on size and aliases: a problem sends the file there.
    const text = file === null ? '' : await readSourceFile(file, file, []);
    raw = text === undefined ? undefined : (parseLaidOutYaml(text).data ?? {});
  } catch {
    raw = undefined;
  }
  // Queue mode keeps the history in Redis; its URL may need ${VAR}s and --queue: the full loader reads it.
  const queued = Boolean(options.env?.[QUEUE_URL_ENV]) || (typeof raw === 'object' && raw !== null && 'queue' in raw);
  const settings = raw === undefined || queued ? undefined : readSettings(raw, dir);
  if (settings) return settings;
  // The full loader (ajv, positions) only when it has something to report, or a queue to resolve.
  const { loadConfig } = await import('./load.js');
  const config = await loadConfig(options);
  return { artifacts: config.artifacts, retention: config.retention, dir: config.dir, ...(config.queue && { queue: config.queue }) };
}

function readSettings(raw: unknown, dir: string): HistorySettings | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const { artifacts, retention } = raw as { artifacts?: unknown; retention?: unknown };
  if (artifacts !== undefined && (typeof artifacts !== 'string' || artifacts === '')) return undefined;
  const policy: RetentionPolicy = {};
  if (retention !== undefined) {
    if (typeof retention !== 'object' || retention === null) return undefined;
    const { 'max-age': maxAge, 'max-runs': maxRuns, ...rest } = retention as Record<string, unknown>;
    if (Object.keys(rest).length > 0) return undefined;
    if (maxAge !== undefined) {
      const ms = typeof maxAge === 'string' ? parseDuration(maxAge) : undefined;
      if (ms === undefined) return undefined;
      policy.maxAgeMs = ms;
    }
    if (maxRuns !== undefined) {
      if (typeof maxRuns !== 'number' || !Number.isSafeInteger(maxRuns) || maxRuns < 1) return undefined;
      policy.maxRuns = maxRuns;
    }
  }
  return { artifacts: resolve(dir, artifacts ?? 'artifacts'), retention: policy, dir };
}
