// Sizes are parsed once, during normalization, like durations: `10MiB`, `512KiB`, `64MB`, `1GiB`, `1000B`.

/** `<number><unit>` with unit B, KB, KiB, MB, MiB, GB or GiB. */
export const SIZE_PATTERN = '^\\d+(\\.\\d+)?(B|KB|KiB|MB|MiB|GB|GiB)$';

/** What a size looks like, for messages and the editor schema. */
export const SIZE_EXPECTED = 'a size like 512KiB, 10MiB or 1GiB';

const UNIT_BYTES: Record<string, number> = { B: 1, KB: 1e3, KiB: 1024, MB: 1e6, MiB: 1024 ** 2, GB: 1e9, GiB: 1024 ** 3 };
const SIZE_WHOLE = /^(\d+(?:\.\d+)?)(B|KB|KiB|MB|MiB|GB|GiB)$/;

/** Parses a size into whole bytes; undefined when the text is not one. */
export function parseSize(text: string): number | undefined {
  const match = SIZE_WHOLE.exec(text);
  if (!match) return undefined;
  const bytes = Math.round(Number(match[1]) * UNIT_BYTES[match[2]]);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** `10485760` → `10MiB`, `1536` → `1.5KiB`. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (bytes >= size) return `${+(bytes / size).toFixed(1)}${unit}`;
  }
  return `${bytes}B`;
}
