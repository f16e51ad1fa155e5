import { stat as statFile } from 'node:fs/promises';
import type { Clock } from '../clock.js';

export type FileEvent = 'add' | 'change' | 'unlink';

/** A file whose events have gone quiet and whose writes have finished. */
export interface SettledFile {
  path: string;
  /** The events since the last settle, collapsed: `add` wins over `change`; add-then-unlink is nothing. */
  event: FileEvent;
  /** When the runner decided the writes had finished (ms since the epoch). */
  stableAtMs: number;
}

/** What stability is judged on. */
export interface FileFacts {
  size: number;
  mtimeMs: number;
}

export interface FileSettlerOptions {
  clock: Clock;
  /** Quiet time after a path's last event before its stability is checked. */
  debounceMs: number;
  /** Time between two stability checks. @default 100 */
  pollMs?: number;
  /** Identical size-and-mtime readings in a row that mean the writes have finished. @default 3 */
  stableChecks?: number;
  /** Reads size and mtime; undefined when the file is gone. @default fs.stat */
  stat?: (path: string) => Promise<FileFacts | undefined>;
  onSettled: (file: SettledFile) => void;
}

interface Pending {
  first: FileEvent;
  last: FileEvent;
  sawAdd: boolean;
  controller: AbortController;
}

/**
 * Turns raw file events into one event per file once it is quiet and stable:
 * every event restarts the path's debounce; then size and mtime are read every
 * `pollMs` until they stayed the same `stableChecks` times in a row. A file
 * written slowly in chunks therefore settles once, after its last chunk; a file
 * renamed into place settles at once. All waiting goes through the Clock.
 */
export class FileSettler {
  private readonly pending = new Map<string, Pending>();
  private readonly pollMs: number;
  private readonly stableChecks: number;
  private readonly stat: (path: string) => Promise<FileFacts | undefined>;
  private closed = false;

  constructor(private readonly options: FileSettlerOptions) {
    this.pollMs = options.pollMs ?? 100;
    this.stableChecks = Math.max(1, options.stableChecks ?? 3);
    this.stat = options.stat ?? statOrUndefined;
  }

  /** Files waiting to settle. */
  get size(): number {
    return this.pending.size;
  }

  /** Notes an event for `path`; restarts its debounce. */
  push(path: string, event: FileEvent): void {
    if (this.closed) return;
    const previous = this.pending.get(path);
    previous?.controller.abort();
    const entry: Pending = {
      first: previous?.first ?? event,
      last: event,
      sawAdd: (previous?.sawAdd ?? false) || event === 'add',
      controller: new AbortController(),
    };
    this.pending.set(path, entry);
    void this.settle(path, entry);
  }

  /** Drops every pending file; nothing settles after this. */
  close(): void {
    this.closed = true;
    for (const entry of this.pending.values()) entry.controller.abort();
    this.pending.clear();
  }

  private async settle(path: string, entry: Pending): Promise<void> {
    const { clock } = this.options;
    const signal = entry.controller.signal;
    try {
      await clock.sleep(this.options.debounceMs, signal);
      const event = collapseEvents(entry);
      if (event === undefined) return;
      if (event !== 'unlink') {
        let last = await this.stat(path);
        for (let same = 1; last && same < this.stableChecks; ) {
          await clock.sleep(this.pollMs, signal);
          const now = await this.stat(path);
          same = now && now.size === last.size && now.mtimeMs === last.mtimeMs ? same + 1 : 1;
          last = now;
        }
        if (!last || signal.aborted) return; // gone before it settled
      }
      if (this.pending.get(path) !== entry) return;
      this.pending.delete(path);
      this.options.onSettled({ path, event, stableAtMs: clock.now() });
    } catch {
      // Aborted: a newer event for this path took over, or the settler closed.
    } finally {
      if (this.pending.get(path) === entry) this.pending.delete(path);
    }
  }
}

/** The one event a burst of events amounts to; undefined when a file came and went. */
export function collapseEvents(events: { first: FileEvent; last: FileEvent; sawAdd: boolean }): FileEvent | undefined {
  if (events.last === 'unlink') return events.first === 'add' ? undefined : 'unlink';
  return events.first === 'add' || events.sawAdd ? 'add' : 'change';
}

async function statOrUndefined(path: string): Promise<FileFacts | undefined> {
  try {
    const facts = await statFile(path);
    return facts.isFile() ? { size: facts.size, mtimeMs: facts.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}
