import { forgetGroup, rememberGroup } from './orphan-reaper.js';
import { listDescendants, signalAll, signalGroup } from './process-tree.js';

const livePids = new Set<number>();
let installed = false;

/**
 * Remembers an app's pid so that, however the runner exits (a crash, an
 * uncaught error, process.exit), its whole process tree is killed with it.
 * Exits that run no handler (SIGKILL) are covered by the orphan reaper.
 */
export function trackChild(pid: number): void {
  livePids.add(pid);
  rememberGroup(pid);
  if (installed) return;
  installed = true;
  process.on('exit', killAllTracked);
}

export function untrackChild(pid: number): void {
  livePids.delete(pid);
  forgetGroup(pid);
}

/** SIGKILLs every tracked child and its descendants; synchronous, for `exit` handlers. */
export function killAllTracked(): void {
  for (const pid of livePids) {
    const tree = [...listDescendants(pid).reverse(), pid];
    signalGroup(pid, 'SIGKILL'); // the app's own process group
    signalAll(tree, 'SIGKILL');
    forgetGroup(pid);
  }
  livePids.clear();
}
