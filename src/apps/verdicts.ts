import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { PriorDiscovery } from '@modelcontextprotocol/client';
import { writeFileAtomic } from '../artifacts/atomic-file.js';
import type { AppConfig } from '../config/types.js';
import { isRecord } from '../is-record.js';

/**
 * Legacy verdicts go stale silently (an upgraded server still answers
 * `initialize`), so they are trusted for a day; a stale modern verdict fails
 * loudly at the first request and is then dropped and re-probed.
 */
export const LEGACY_VERDICT_TTL_MS = 24 * 60 * 60 * 1000;

interface StoredVerdict {
  prior: PriorDiscovery;
  savedAt: number;
}

/**
 * Each app's protocol-era verdict, remembered across runs in one JSON file so
 * a stdio app is spawned once per connection instead of once more for the
 * SDK's `server/discover` probe.
 */
export class VerdictStore {
  private entries: Record<string, StoredVerdict> | undefined;

  constructor(
    private readonly file: string | null,
    private readonly now: () => number = Date.now,
  ) {}

  /** The remembered verdict for this app, if still trusted. */
  get(app: AppConfig): PriorDiscovery | undefined {
    const entries = this.load();
    const key = keyFor(app);
    const stored: unknown = Object.hasOwn(entries, key) ? entries[key] : undefined;
    // The file is only a cache: an entry of another shape (hand-edited, another version's) is not trusted, and the app is probed.
    if (!isStoredVerdict(stored)) return undefined;
    // A day either way: a legacy verdict dated in the future (a clock set back, an edited file) is not trusted forever.
    if (stored.prior.kind === 'legacy' && !(Math.abs(this.now() - stored.savedAt) <= LEGACY_VERDICT_TTL_MS)) return undefined;
    return stored.prior;
  }

  set(app: AppConfig, prior: PriorDiscovery): void {
    const entries = this.load();
    entries[keyFor(app)] = { prior, savedAt: this.now() };
    this.save();
  }

  delete(app: AppConfig): void {
    const entries = this.load();
    if (!(keyFor(app) in entries)) return;
    delete entries[keyFor(app)];
    this.save();
  }

  private load(): Record<string, StoredVerdict> {
    if (this.entries) return this.entries;
    this.entries = {};
    if (!this.file) return this.entries;
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) this.entries = parsed as Record<string, StoredVerdict>;
    } catch {
      // Missing or unreadable: start empty; the next save rewrites it.
    }
    return this.entries;
  }

  private save(): void {
    if (!this.file) return;
    try {
      writeFileAtomic(this.file, JSON.stringify(this.entries, null, 2));
    } catch {
      // A cache that cannot be written only costs a probe next time.
    }
  }
}

function isStoredVerdict(value: unknown): value is StoredVerdict {
  if (!isRecord(value) || typeof value.savedAt !== 'number' || !isRecord(value.prior)) return false;
  const { prior } = value;
  return prior.kind === 'legacy' || (prior.kind === 'modern' && isRecord(prior.discover));
}

/** What identifies "the same server": how it is launched or where it lives. */
function keyFor(app: AppConfig): string {
  const identity =
    app.transport === 'stdio'
      ? { command: app.command, args: app.args, cwd: app.cwd, env: app.env }
      : { url: app.url };
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 32);
}
