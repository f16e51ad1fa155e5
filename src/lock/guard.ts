import { compareTool } from './compare.js';
import { pinTool, type ListedTool } from './pin.js';
import type { LockFile } from './types.js';

/** Says what changed in a tool since the lock, or undefined when it is as locked. */
export type ToolCheck = (app: string, tool: ListedTool) => string | undefined;

/**
 * The check each call makes during a run, after the one before it: an app
 * that restarted mid-run, or announced a new tool list, may list another
 * definition than the one compared at the start. Each definition object is
 * hashed once (a connection keeps one per listing), so a call costs a lookup.
 */
export function createToolCheck(lock: LockFile): ToolCheck {
  const matching = new WeakSet<object>();
  return (app, tool) => {
    if (matching.has(tool)) return undefined;
    const drifts = compareTool(lock.apps[app]?.tools[tool.name], pinTool(tool));
    if (drifts.length === 0) {
      matching.add(tool);
      return undefined;
    }
    return drifts.map((drift) => drift.change).join('; ');
  };
}
