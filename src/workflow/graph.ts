/** A step as the graph sees it: its id and the ids it needs. */
export interface GraphStep {
  id: string;
  needs: readonly string[];
}

/**
 * Edges in compressed form: the edges of step i are `targets[start[i]]` up to
 * `targets[start[i + 1]]`. Flat typed arrays keep a 10,000-step plan cheap.
 */
interface Edges {
  start: Int32Array;
  targets: Int32Array;
}

/** Each step list's id → first index, as its loader built it (rememberStepIndexes), with the length it had then. */
const knownIndexes = new WeakMap<readonly GraphStep[], { indexById: ReadonlyMap<string, number>; count: number }>();

/**
 * Tells the graph functions where each id of `steps` is first (every id the
 * steps' needs can name), so that planning a loaded workflow does not build
 * the map again: 10,000 ids cost a 10,000-step plan half its time. The list
 * must not change afterwards; a list of another length is mapped afresh.
 */
export function rememberStepIndexes(steps: readonly GraphStep[], indexById: ReadonlyMap<string, number>): void {
  knownIndexes.set(steps, { indexById, count: steps.length });
}

/**
 * Turns `needs` into edges by step index. Needs naming no step are dropped
 * (validation reports them); a repeated id resolves to its first step.
 */
function collectNeeds(steps: readonly GraphStep[]): { indexById: ReadonlyMap<string, number>; needs: Edges } {
  const known = knownIndexes.get(steps);
  let edgeCount = 0;
  for (let i = 0; i < steps.length; i++) edgeCount += steps[i].needs.length;
  const indexById = known?.count === steps.length ? known.indexById : indexSteps(steps);
  const start = new Int32Array(steps.length + 1);
  const targets = new Int32Array(edgeCount);
  let next = 0;
  for (let i = 0; i < steps.length; i++) {
    start[i] = next;
    for (const id of steps[i].needs) {
      const target = indexById.get(id);
      if (target !== undefined) targets[next++] = target;
    }
  }
  start[steps.length] = next;
  return { indexById, needs: { start, targets: targets.subarray(0, next) } };
}

function indexSteps(steps: readonly GraphStep[]): Map<string, number> {
  const indexById = new Map<string, number>();
  for (let i = 0; i < steps.length; i++) if (!indexById.has(steps[i].id)) indexById.set(steps[i].id, i);
  return indexById;
}

/** Reverses edges: for each step, the steps that need it (in file order). */
function reverseEdges(needs: Edges): Edges {
  const count = needs.start.length - 1;
  const start = new Int32Array(count + 1);
  for (const target of needs.targets) start[target + 1]++;
  for (let i = 0; i < count; i++) start[i + 1] += start[i];
  const fill = start.slice(0, count);
  const targets = new Int32Array(needs.targets.length);
  for (let from = 0; from < count; from++) {
    for (let e = needs.start[from]; e < needs.start[from + 1]; e++) targets[fill[needs.targets[e]]++] = from;
  }
  return { start, targets };
}

/**
 * The first cycle found, as step ids where each needs the next, ending where it
 * started (e.g. ['a','b','c','a']), or null. Iterative: workflows may have 10,000 steps.
 */
export function findCycle(steps: readonly GraphStep[]): string[] | null {
  const { needs } = collectNeeds(steps);
  const unvisited = 0;
  const onPath = 1;
  const done = 2;
  const state = new Uint8Array(steps.length);
  // The current depth-first path, and for each entry the next edge to follow.
  const path: number[] = [];
  const nextEdge: number[] = [];
  for (let root = 0; root < steps.length; root++) {
    if (state[root] !== unvisited) continue;
    state[root] = onPath;
    path.push(root);
    nextEdge.push(needs.start[root]);
    while (path.length > 0) {
      const top = path.length - 1;
      const node = path[top];
      if (nextEdge[top] >= needs.start[node + 1]) {
        state[node] = done;
        path.pop();
        nextEdge.pop();
        continue;
      }
      const need = needs.targets[nextEdge[top]++];
      if (state[need] === onPath) {
        const cycle = path.slice(path.lastIndexOf(need));
        cycle.push(need);
        return cycle.map((index) => steps[index].id);
      }
      if (state[need] === unvisited) {
        state[need] = onPath;
        path.push(need);
        nextEdge.push(needs.start[need]);
      }
    }
  }
  return null;
}

/**
 * Parallel groups in topological order: level 0 holds steps with no needs,
 * level n steps whose needs are all in earlier levels; file order within a
 * level. Assumes no cycle (steps on or after one are left out).
 */
export function planLevels(steps: readonly GraphStep[]): string[][] {
  const { needs } = collectNeeds(steps);
  const dependents = reverseEdges(needs);
  const count = steps.length;
  const waitingFor = new Int32Array(count);
  const level = new Int32Array(count);
  // Kahn's algorithm; `ready` doubles as the queue, read by a moving head.
  const ready = new Int32Array(count);
  let tail = 0;
  for (let i = 0; i < count; i++) {
    waitingFor[i] = needs.start[i + 1] - needs.start[i];
    if (waitingFor[i] === 0) ready[tail++] = i;
  }
  let levelCount = tail > 0 ? 1 : 0;
  for (let head = 0; head < tail; head++) {
    const node = ready[head];
    for (let e = dependents.start[node]; e < dependents.start[node + 1]; e++) {
      const dependent = dependents.targets[e];
      if (level[node] + 1 > level[dependent]) level[dependent] = level[node] + 1;
      if (--waitingFor[dependent] === 0) {
        ready[tail++] = dependent;
        if (level[dependent] + 1 > levelCount) levelCount = level[dependent] + 1;
      }
    }
  }
  const levels: string[][] = Array.from({ length: levelCount }, () => []);
  for (let i = 0; i < count; i++) {
    // A step on or after a cycle never became ready.
    if (waitingFor[i] === 0) levels[level[i]].push(steps[i].id);
  }
  return levels;
}

/** Every step that (transitively) depends on `id`, not counting `id` itself. */
export function findDependents(steps: readonly GraphStep[], id: string): Set<string> {
  const { indexById, needs } = collectNeeds(steps);
  const found = new Set<string>();
  const first = indexById.get(id);
  if (first === undefined) return found;
  const dependents = reverseEdges(needs);
  const seen = new Uint8Array(steps.length);
  const queue = new Int32Array(steps.length);
  let tail = 0;
  queue[tail++] = first;
  seen[first] = 1;
  for (let head = 0; head < tail; head++) {
    const node = queue[head];
    for (let e = dependents.start[node]; e < dependents.start[node + 1]; e++) {
      const dependent = dependents.targets[e];
      if (seen[dependent]) continue;
      seen[dependent] = 1;
      found.add(steps[dependent].id);
      queue[tail++] = dependent;
    }
  }
  return found;
}
