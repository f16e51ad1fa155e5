/** Replaces every secret value in `text` by `***`. Values are matched longest first. */
export function maskSecrets(text: string, secretValues: readonly string[]): string {
  let masked = text;
  for (const value of secretValues) {
    if (value.length === 0) continue;
    masked = masked.split(value).join('***');
  }
  return masked;
}

/** Masks secrets anywhere inside a JSON-like value (strings only; keys kept). */
export function maskSecretsDeep<T>(value: T, secretValues: readonly string[]): T {
  if (secretValues.length === 0) return value;
  return walk(value) as T;

  function walk(node: unknown): unknown {
    if (typeof node === 'string') return maskSecrets(node, secretValues);
    if (Array.isArray(node)) return node.map(walk);
    if (node && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) out[key] = walk(child);
      return out;
    }
    return node;
  }
}
