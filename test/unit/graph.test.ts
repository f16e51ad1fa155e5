import { describe, it, expect } from 'vitest';
import { findCycle, findDependents, planLevels, rememberStepIndexes } from '../../src/workflow/graph.js';

const step = (id: string, ...needs: string[]) => ({ id, needs });

/** s0 <- s1 <- ... <- s(n-1): each step needs the one before it. */
function createChain(length: number) {
  return Array.from({ length }, (_, i) => step(`s${i}`, ...(i === 0 ? [] : [`s${i - 1}`])));
}

describe('findCycle', () => {
  it('returns null when there is none', () => {
    expect(findCycle([step('a'), step('b', 'a'), step('c', 'a', 'b')])).toBeNull();
    expect(findCycle([])).toBeNull();
  });

  it('finds a self-loop', () => {
    expect(findCycle([step('a'), step('b', 'b')])).toEqual(['b', 'b']);
  });

  it('finds a 3-cycle in needs order', () => {
    expect(findCycle([step('a', 'b'), step('b', 'c'), step('c', 'a'), step('d', 'a')])).toEqual(['a', 'b', 'c', 'a']);
  });

  it('finds a cycle reached through a path that is not on it', () => {
    expect(findCycle([step('start', 'x'), step('x', 'y'), step('y', 'z'), step('z', 'x')])).toEqual(['x', 'y', 'z', 'x']);
  });

  it('ignores needs that name no step', () => {
    expect(findCycle([step('a', 'ghost')])).toBeNull();
  });

  it('handles a 10,000-step chain without recursion', () => {
    const chain = createChain(10_000);
    expect(findCycle(chain)).toBeNull();
    chain[0] = step('s0', 's9999');
    const cycle = findCycle(chain);
    expect(cycle).toHaveLength(10_001);
    expect(cycle![0]).toBe(cycle![10_000]);
  });
});

describe('planLevels', () => {
  it('plans a diamond as three levels', () => {
    const steps = [step('d', 'b', 'c'), step('c', 'a'), step('b', 'a'), step('a')];
    expect(planLevels(steps)).toEqual([['a'], ['c', 'b'], ['d']]);
  });

  it('puts independent steps in level 0 in file order and a step after its deepest need', () => {
    const steps = [step('z'), step('y'), step('late', 'chain2', 'z'), step('chain1', 'y'), step('chain2', 'chain1')];
    expect(planLevels(steps)).toEqual([['z', 'y'], ['chain1'], ['chain2'], ['late']]);
  });

  it('plans a 10,000-step chain as 10,000 levels of one', () => {
    const levels = planLevels(createChain(10_000));
    expect(levels).toHaveLength(10_000);
    expect(levels[0]).toEqual(['s0']);
    expect(levels[9_999]).toEqual(['s9999']);
    expect(levels.every((level, i) => level.length === 1 && level[0] === `s${i}`)).toBe(true);
  });
});

describe('rememberStepIndexes', () => {
  it("plans a list with the index its loader remembered, and maps the list afresh once its length changed", () => {
    const steps = [step('a'), step('b', 'a'), step('c', 'b')];
    // A wrong index (`a` third, `c` first) that turns b and c into a loop: the plan follows it, so it was used.
    rememberStepIndexes(steps, new Map([['a', 2], ['b', 1], ['c', 0]]));
    expect(planLevels(steps)).toEqual([['a']]);
    steps.push(step('d', 'c'));
    expect(planLevels(steps)).toEqual([['a'], ['b'], ['c'], ['d']]);
    expect(planLevels([...steps])).toEqual([['a'], ['b'], ['c'], ['d']]);
  });
});

describe('findDependents', () => {
  it('finds every step that depends on a step, transitively', () => {
    const steps = [step('a'), step('b', 'a'), step('c', 'b'), step('d'), step('e', 'd', 'c')];
    expect(findDependents(steps, 'a')).toEqual(new Set(['b', 'c', 'e']));
    expect(findDependents(steps, 'e')).toEqual(new Set());
    expect(findDependents(steps, 'missing')).toEqual(new Set());
  });

  it('walks a 10,000-step chain', () => {
    expect(findDependents(createChain(10_000), 's0').size).toBe(9_999);
  });
});
