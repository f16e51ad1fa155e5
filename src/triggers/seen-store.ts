import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive } from '../process-info.js';
import { STATE_FOLDER } from './excluded-paths.js';
import { writeFileAtomic } from '../artifacts/atomic-file.js';
import { createExclusive } from './exclusive-file.js';

/** What a content marker says about the run of one file content. */
export interface ContentMark {
  status: 'running' | 'succeeded';
  path: string;
  runId?: string;
  pid: number;
  host: string;
  at: string;
}

/** A marker nobody finished writing (a crash between create and write) counts as abandoned after this. */
const EMPTY_MARK_STALE_MS = 10_000;

/** sha256 of a file's content, hex. */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Remembers which file contents a workflow has run, across restarts and
 * across runner processes sharing the artifacts folder: one marker file per
 * content, `<artifacts>/.runner/seen/<workflow>/<sha256>`, created with O_EXCL
 * so that only one process runs a given content. A run that fails or is
 * cancelled forgets its content, so the same file dropped again runs again; a
 * marker left `running` by a process that no longer exists (a crash) is taken over.
 */
export class SeenStore {
  readonly folder: string;

  constructor(artifacts: string) {
    this.folder = join(artifacts, STATE_FOLDER, 'seen');
  }

  /** Claims `hash` for this process; when it is taken, says by what. */
  async take(workflow: string, hash: string, path: string, nowMs: number): Promise<{ taken: true } | { taken: false; mark: ContentMark | undefined }> {
    const file = this.fileOf(workflow, hash);
    const mark: ContentMark = { status: 'running', path, pid: process.pid, host: hostname(), at: new Date(nowMs).toISOString() };
    if (await createExclusive(file, JSON.stringify(mark) + '\n')) return { taken: true };
    const existing = await readMark(file);
    if (await isAbandoned(file, existing, nowMs)) {
      writeFileAtomic(file, JSON.stringify(mark) + '\n');
      return { taken: true };
    }
    return { taken: false, mark: existing };
  }

  /** Records the run that took `hash`: kept for good when it succeeded, forgotten otherwise. */
  async finish(workflow: string, hash: string, outcome: { runId: string; path: string; succeeded: boolean }, nowMs: number): Promise<void> {
    const file = this.fileOf(workflow, hash);
    if (!outcome.succeeded) {
      await rm(file, { force: true });
      return;
    }
    const mark: ContentMark = { status: 'succeeded', path: outcome.path, runId: outcome.runId, pid: process.pid, host: hostname(), at: new Date(nowMs).toISOString() };
    writeFileAtomic(file, JSON.stringify(mark) + '\n');
  }

  /** What the marker of `hash` says, if there is one. */
  async peek(workflow: string, hash: string): Promise<ContentMark | undefined> {
    return readMark(this.fileOf(workflow, hash));
  }

  /**
   * Contents a process that no longer exists was running when it died: what
   * a restart must pick up again, so that no trigger is lost.
   */
  async abandoned(workflow: string, nowMs: number): Promise<(ContentMark & { hash: string })[]> {
    const folder = join(this.folder, workflow);
    const names = await readdir(folder).catch(() => [] as string[]);
    const found: (ContentMark & { hash: string })[] = [];
    for (const hash of names) {
      const file = join(folder, hash);
      const mark = await readMark(file);
      if (mark && (await isAbandoned(file, mark, nowMs))) found.push({ ...mark, hash });
    }
    return found;
  }

  /** Forgets `hash` (the run never started). */
  async forget(workflow: string, hash: string): Promise<void> {
    await rm(this.fileOf(workflow, hash), { force: true });
  }

  private fileOf(workflow: string, hash: string): string {
    return join(this.folder, workflow, hash);
  }
}

async function readMark(file: string): Promise<ContentMark | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as ContentMark;
  } catch {
    return undefined;
  }
}

/** A `running` marker of a dead process on this host, or an empty one left long ago. */
async function isAbandoned(file: string, mark: ContentMark | undefined, nowMs: number): Promise<boolean> {
  if (!mark) {
    try {
      return nowMs - (await stat(file)).mtimeMs > EMPTY_MARK_STALE_MS;
    } catch {
      return false;
    }
  }
  return mark.status === 'running' && mark.host === hostname() && mark.pid !== process.pid && !isProcessAlive(mark.pid);
}
