/** The lockfile's format version; a lock of another version is refused, not guessed at. */
export const LOCK_VERSION = 1;

/** `runner.lock`: what the tools a project's workflows use looked like when they were last reviewed. */
export interface LockFile {
  version: typeof LOCK_VERSION;
  /** App name → what its server said at connect time and the tools the workflows use. */
  apps: Record<string, LockedApp>;
}

export interface LockedApp {
  server: { name: string; version: string } | null;
  protocolVersion: string | null;
  /** Tool name → its pinned definition. */
  tools: Record<string, LockedTool>;
}

/** The fields of a tool that decide what runner lets it do, and their hash. */
export interface PinnedFields {
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: Record<string, unknown>;
}

export interface LockedTool extends PinnedFields {
  /** `sha256:<hex>` of the canonical JSON of the pinned fields. */
  hash: string;
  /** Set when the definition was over the size the lock keeps: only `hash` is stored and compared. */
  oversize?: true;
}

/** App → tool names a set of workflows calls (the runner's own tools excluded). */
export type UsedTools = Map<string, Set<string>>;

/** How bad a change is, worst first. */
export type DriftSeverity = 'less-safe' | 'breaking' | 'description' | 'schema' | 'info';

/** One difference between the lock and what an app lists now. */
export interface Drift {
  app: string;
  /** Absent for a change of the app itself (its server's name or version, its protocol version). */
  tool?: string;
  severity: DriftSeverity;
  /** What changed, in a few words: "readOnlyHint true → false", "new required argument `path`". */
  change: string;
  before?: unknown;
  after?: unknown;
  /** Whether it stops a run (every change to a tool does; an app's version alone does not). */
  stops: boolean;
}

export const SEVERITY_ORDER: readonly DriftSeverity[] = ['less-safe', 'breaking', 'description', 'schema', 'info'];
