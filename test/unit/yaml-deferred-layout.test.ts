import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/errors.js';
import { DEFER_LAYOUT_BYTES, locateInString, locateItems, locateKeys, locatePath, parseYamlSource, type YamlPath, type YamlSource } from '../../src/config/yaml-source.js';

// A file of DEFER_LAYOUT_BYTES or more leaves the insides of its top-level
// lists' items without layouts until a position inside one is asked for. Every
// position must come out as it does for the same text laid out at once.

/** One step of many shapes: flow and block values, a block scalar, nested lists, comments, quoted keys, an anchor used inside. */
function step(i: number): string {
  const shapes = [
    [`  - id: s${i}`, `    uses: app.tool`, `    with: { text: "\${{ steps.s${i - 1}.outputs.text }}", n: ${i}, list: [a, "b", { c: d }] }`],
    [`  -`, `    id: s${i}`, `    with:`, `      # a comment`, `      body: |`, `        line one ${i}`, `        line two`, `      'quoted key': "x"`],
    [`  - id: s${i}`, `    needs: [s${i - 1}]`, `    with:`, `      items:`, `        - one`, `        - { two: 2 }`, `        -`, `          - nested ${i}`],
    [`  # between steps`, `  - id: s${i}`, `    with: &w${i}`, `      a: 1`, `    also: *w${i}`, `    text: plain words ${i}`],
  ];
  return shapes[i % shapes.length].join('\n');
}

function bigWorkflow(extra: string[] = []): string {
  const lines = ['name: big', 'inputs:', '  a: { type: string, default: x }', 'steps:'];
  // Counted as it grows: joining the whole file again after each step made this take a second.
  let length = lines.join('\n').length;
  for (let i = 0; length < DEFER_LAYOUT_BYTES + 20_000; i++) {
    const next = step(i);
    lines.push(next);
    length += next.length + 1;
  }
  lines.push(...extra, 'timeout: 1m', '');
  return lines.join('\n');
}

function parse(text: string, eager: boolean): YamlSource {
  const diagnostics: Diagnostic[] = [];
  const { source } = parseYamlSource(text, 'big.yaml', diagnostics, { eager });
  expect(diagnostics).toEqual([]);
  return source;
}

/** Every path to a value of the data, parents before children. */
function pathsOf(value: unknown, path: YamlPath = [], into: YamlPath[] = []): YamlPath[] {
  into.push(path);
  if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) pathsOf(child, [...path, Array.isArray(value) ? Number(key) : key], into);
  }
  return into;
}

/** What the source says about `path`: where its key, its value, its keys and a character of it are. */
function positions(source: YamlSource, path: YamlPath): unknown {
  return [locatePath(source, path), locatePath(source, path, 'key'), locateKeys(source, path), locateItems(source, path), locateInString(source, path, 1)];
}

/**
 * The paths (in the order given, which is the order `lazy` is asked about them)
 * where the two sources say different things, with what each says: one
 * `expect` for thousands of paths instead of one each, which cost a quarter of
 * a second here.
 */
function differences(lazy: YamlSource, eager: YamlSource, paths: readonly YamlPath[]): string[] {
  const found: string[] = [];
  for (const path of paths) {
    const [got, wanted] = [JSON.stringify(positions(lazy, path)), JSON.stringify(positions(eager, path))];
    if (got !== wanted) found.push(`${JSON.stringify(path)}: ${got} instead of ${wanted}`);
  }
  return found;
}

describe('deferred layouts of a large file', () => {
  it('gives every position the file laid out at once gives, an item laid out when first asked for', () => {
    const text = bigWorkflow();
    const lazy = parse(text, false);
    const eager = parse(text, true);
    expect(eager.deferred).toBeUndefined();
    expect(lazy.deferred?.lists.size).toBe(1);
    expect(lazy.layouts.size).toBeLessThan(eager.layouts.size / 4);
    const paths = pathsOf(eager.data);
    // Steps in another order than the file's: one item at a time, each on its own.
    const steps = (eager.data as { steps: unknown[] }).steps.length;
    for (const index of [steps - 1, 7, 0, 3, 2, 1]) {
      expect(differences(lazy, eager, paths.filter((p) => p[0] === 'steps' && p[1] === index))).toEqual([]);
    }
    expect(lazy.deferred?.done.size).toBe(6);
    expect(lazy.deferred?.whole).toBe(false);
    expect(differences(lazy, eager, paths)).toEqual([]);
    expect(lazy.deferred?.done.size).toBe(steps);
  });

  it('lays out the whole file when an item does not read the same on its own (an alias of an anchor in another item)', () => {
    const text = bigWorkflow(['  - id: first', '    with: &outside { a: 1 }', '  - id: second', '    with: *outside']);
    const lazy = parse(text, false);
    const eager = parse(text, true);
    const steps = (eager.data as { steps: unknown[] }).steps.length;
    expect(positions(lazy, ['steps', steps - 1, 'with', 'a'])).toEqual(positions(eager, ['steps', steps - 1, 'with', 'a']));
    expect(lazy.deferred?.lists.size).toBe(0);
    expect(differences(lazy, eager, pathsOf(eager.data))).toEqual([]);
  });

  it('lays a small file out at once', () => {
    const source = parse('steps:\n  - id: a\n    with: { x: 1 }\n', false);
    expect(source.deferred).toBeUndefined();
    expect(locatePath(source, ['steps', 0, 'with', 'x'])).toEqual({ file: 'big.yaml', line: 3, col: 16 });
  });
});
