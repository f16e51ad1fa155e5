import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from '../../src/nesting.js';

const nested = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);

describe('nestsDeeperThan', () => {
  it('counts objects and arrays inside each other; scalars do not count', () => {
    expect(nestsDeeperThan(nested(3), 3)).toBe(false);
    expect(nestsDeeperThan(nested(4), 3)).toBe(true);
    expect(nestsDeeperThan({ a: { b: [1, 'x', null] } }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: { b: [{}] } }, 3)).toBe(true);
    expect(nestsDeeperThan('text', 0)).toBe(false);
    expect(nestsDeeperThan(null, 0)).toBe(false);
  });

  it('finds the deep branch among wide shallow ones, and walks 200,000 levels without overflowing the stack', () => {
    const wide = { rows: Array.from({ length: 10_000 }, (_, i) => ({ i, tags: ['a', 'b'] })), deep: nested(50) };
    expect(nestsDeeperThan(wide, 40)).toBe(true);
    expect(nestsDeeperThan(wide, 60)).toBe(false);
    expect(nestsDeeperThan(nested(200_000), 1_000)).toBe(true);
  });
});
