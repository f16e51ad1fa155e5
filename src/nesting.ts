// JSON.parse takes data of any depth, but much of what runner does with data
// walks it recursively (masking secrets, writing the run record, rendering
// the report), and a value nested some 5,000 levels deep overflows the stack
// there: a 200 KB answer of `[[[[…]]]]` from an app stopped a whole run as
// "could not be recorded". Data from apps is held to a depth, checked here
// without recursion.

/** How deep data from an app (a result, a tool list) may nest. */
export const MAX_APP_DATA_NESTING = 1_000;

/** Whether `value` holds an object or array inside `max` others (checked without recursion; shared parts are walked again). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth > max) return true;
    const children: unknown[] = Array.isArray(node) ? (node as unknown[]) : Object.values(node);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
