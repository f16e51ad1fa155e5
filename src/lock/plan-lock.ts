import type { AppRegistry } from '../apps/registry.js';
import type { RunnerConfig } from '../config/types.js';
import { RunnerError, throwOnDiagnostics, type Diagnostic } from '../errors.js';
import { locateStepKey } from '../workflow/load.js';
import type { Workflow } from '../workflow/types.js';
import { compareWithLock } from './compare.js';
import { lockEntriesFor, mergeLock, usedTools } from './entries.js';
import { readLiveApps } from './live-apps.js';
import { lockFilePath, readLockFile, serializeLock } from './lock-file.js';
import type { Drift, LockFile, UsedTools } from './types.js';

/** What `runner lock` would do: the lock to write, and how it differs from the one there. */
export interface LockPlan {
  file: string;
  /** The lockfile as it is (undefined: there is none yet). */
  existing: LockFile | undefined;
  next: LockFile;
  /** Changes to tools and apps the existing lock already holds, worst first: these need `--update`. */
  drifts: Drift[];
  /** Whether writing `next` would change the file at all (tools added or dropped count). */
  changed: boolean;
  /** How many tools of how many apps `next` pins. */
  tools: number;
  apps: number;
}

/**
 * Reads the tools the workflows call from their apps and works out the new
 * lock. `replaceAll` (no workflow named): the lock is made from these
 * workflows alone, dropping tools no longer called; otherwise their entries
 * are written over the existing lock and every other entry is kept. An app
 * that cannot be reached, or a step whose tool the app does not list, is an
 * error: there would be nothing to pin.
 */
export async function planLock(options: { config: RunnerConfig; workflows: readonly Workflow[]; apps: AppRegistry; replaceAll: boolean; signal?: AbortSignal }): Promise<LockPlan> {
  const file = lockFilePath(options.config);
  const existing = await readLockFile(file);
  const used = usedTools(options.workflows);
  const live = await readLiveApps(options.apps, used.keys(), options.signal);
  const unreachable = [...live].filter((entry): entry is [string, Error] => entry[1] instanceof Error);
  if (unreachable.length > 0) {
    const [name, error] = unreachable[0];
    throw new RunnerError('app', `cannot lock the tools of app \`${name}\`: ${error.message}`, {
      hint: unreachable.length > 1 ? `also unreachable: ${unreachable.slice(1).map(([other]) => other).join(', ')}` : 'runner lock reads each tool from its app: start the app, or fix its entry in the config',
    });
  }
  const reached = new Map([...live].map(([name, app]) => [name, app as Exclude<typeof app, Error>]));
  throwOnDiagnostics('workflow', missingTools(options.workflows, reached));
  const entries = lockEntriesFor(used, reached);
  const next = existing && !options.replaceAll ? mergeLock(existing, entries) : entries;
  const drifts = existing ? compareWithLock(existing, entries, alreadyLocked(used, existing)) : [];
  const tools = Object.values(next.apps).reduce((count, app) => count + Object.keys(app.tools).length, 0);
  return { file, existing, next, drifts, changed: !existing || serializeLock(existing) !== serializeLock(next), tools, apps: Object.keys(next.apps).length };
}

/** Of the used tools, the ones the lock has an entry for: a tool locked for the first time is not drift. */
function alreadyLocked(used: UsedTools, lock: LockFile): UsedTools {
  const kept: UsedTools = new Map();
  for (const [app, tools] of used) {
    const locked = lock.apps[app];
    if (locked) kept.set(app, new Set([...tools].filter((tool) => tool in locked.tools)));
  }
  return kept;
}

/** A diagnostic at each step whose tool its app does not list. */
function missingTools(workflows: readonly Workflow[], live: ReadonlyMap<string, { tools: readonly { name: string }[] }>): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const workflow of workflows) {
    for (const [index, step] of workflow.steps.entries()) {
      const app = live.get(step.app);
      if (!app || app.tools.some((tool) => tool.name === step.tool)) continue;
      diagnostics.push({
        location: locateStepKey(workflow, index, 'uses'),
        message: `app \`${step.app}\` has no tool \`${step.tool}\`, so it cannot be locked`,
        hint: `\`runner tools ${step.app}\` lists its tools`,
      });
    }
  }
  return diagnostics;
}
