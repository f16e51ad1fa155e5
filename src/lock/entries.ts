import { BUILTIN_APP } from '../builtins/catalog.js';
import type { Workflow } from '../workflow/types.js';
import { pinTool, type ListedTool } from './pin.js';
import { LOCK_VERSION, type LockFile, type UsedTools } from './types.js';

/** What one app said at connect time: its server, protocol version and tool list. */
export interface LiveApp {
  server: { name: string; version: string } | undefined;
  protocolVersion: string | undefined;
  tools: readonly ListedTool[];
}

/** The app tools the workflows' steps call (foreach steps too), by app; the runner's own tools are never locked. */
export function usedTools(workflows: readonly Pick<Workflow, 'steps'>[]): UsedTools {
  const used: UsedTools = new Map();
  for (const workflow of workflows) {
    for (const step of workflow.steps) {
      if (step.app === BUILTIN_APP) continue;
      let tools = used.get(step.app);
      if (!tools) used.set(step.app, (tools = new Set()));
      tools.add(step.tool);
    }
  }
  return used;
}

/**
 * What `runner lock` would write for these tools, from the apps as they are
 * now: each used app's server and protocol version, and each used tool it
 * lists (a tool it does not list is left out; an app missing from `live` too).
 */
export function lockEntriesFor(used: UsedTools, live: ReadonlyMap<string, LiveApp>): LockFile {
  const lock: LockFile = { version: LOCK_VERSION, apps: {} };
  for (const [app, names] of used) {
    const listed = live.get(app);
    if (!listed) continue;
    const byName = new Map(listed.tools.map((tool) => [tool.name, tool]));
    const tools: LockFile['apps'][string]['tools'] = {};
    for (const name of names) {
      const tool = byName.get(name);
      if (tool) tools[name] = pinTool(tool);
    }
    lock.apps[app] = { server: listed.server ?? null, protocolVersion: listed.protocolVersion ?? null, tools };
  }
  return lock;
}

/**
 * `runner lock WORKFLOW...`: the existing lock with these entries written
 * over it: their apps' server info and their tools replaced or added, every
 * other app and tool kept as it was.
 */
export function mergeLock(existing: LockFile, entries: LockFile): LockFile {
  const apps: LockFile['apps'] = { ...existing.apps };
  for (const [name, app] of Object.entries(entries.apps)) {
    apps[name] = { ...app, tools: { ...existing.apps[name]?.tools, ...app.tools } };
  }
  return { version: LOCK_VERSION, apps };
}
