import { join } from 'node:path';
import { writeFileAtomic } from '../artifacts/run-record.js';

/** The formats `runner.save` writes. */
export type SaveFormat = 'text' | 'json' | 'csv';

/** What is wrong with a `name` for `runner.save`, or undefined when it is a plain file name the step folder can hold. */
export function checkSaveName(name: string): string | undefined {
  if (name === 'result.json') return '`result.json` is the step\'s own record of its result';
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
    return 'expected a plain file name of letters, digits, `.`, `_` and `-` (at most 100, not starting with `.`; no folders)';
  }
  return undefined;
}

/** The format for this name and content: csv for a .csv name with a list of rows or records, text for a string, else json. */
export function chooseFormat(name: string, content: unknown, format: SaveFormat | undefined): SaveFormat {
  if (format) return format;
  if (name.toLowerCase().endsWith('.csv') && Array.isArray(content)) return 'csv';
  return typeof content === 'string' ? 'text' : 'json';
}

/** The bytes of a saved file. */
export function renderContent(content: unknown, format: SaveFormat): string {
  switch (format) {
    case 'text':
      return typeof content === 'string' ? content : JSON.stringify(content, null, 2);
    case 'json':
      return JSON.stringify(content ?? null, null, 2) + '\n';
    case 'csv':
      return toCsv(content);
  }
}

/**
 * CSV as RFC 4180 writes it (fields with a comma, quote or line break are
 * quoted, quotes doubled), lines ending in `\n`. Rows are arrays of cells, or
 * objects: then the first line names the columns, in the order keys first
 * appear. A cell that is an object or array is written as its JSON; null is
 * an empty cell.
 */
export function toCsv(content: unknown): string {
  if (!Array.isArray(content)) throw new Error('CSV needs a list of rows (arrays) or records (objects)');
  if (content.length === 0) return '';
  const records = content.every((row) => row !== null && typeof row === 'object' && !Array.isArray(row));
  const rows: unknown[][] = [];
  if (records) {
    const columns: string[] = [];
    const seen = new Set<string>();
    for (const row of content as Record<string, unknown>[]) {
      for (const key of Object.keys(row)) {
        if (seen.has(key)) continue;
        seen.add(key);
        columns.push(key);
      }
    }
    rows.push(columns);
    for (const row of content as Record<string, unknown>[]) rows.push(columns.map((column) => row[column]));
  } else {
    for (const [index, row] of content.entries()) {
      if (!Array.isArray(row)) throw new Error(`CSV needs every row to be a list of cells (or every row a record); row ${index} is ${row === null ? 'null' : typeof row}`);
      rows.push(row);
    }
  }
  return rows.map((row) => row.map(csvCell).join(',')).join('\n') + '\n';
}

function csvCell(value: unknown): string {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects are turned into JSON first: only primitives reach String()
  const text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Writes the file into the step folder (atomically) and returns its path and size. */
export function saveNamedFile(stepDir: string, name: string, text: string): { path: string; bytes: number } {
  const path = join(stepDir, name);
  const data = Buffer.from(text, 'utf8');
  writeFileAtomic(path, data);
  return { path, bytes: data.length };
}
