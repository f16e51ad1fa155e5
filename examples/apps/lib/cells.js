// Cells: A1-style addresses <-> 1-based { col, row }, and cell values <-> JSON values.
import { ToolError } from './tool-result.js';

const MAX_COL = 16384; // XFD
const MAX_ROW = 1048576;

/** "B2" (or "$B$2") -> { col: 2, row: 2 }; throws ToolError for anything else. */
export function parseCell(address) {
  const match = /^\$?([A-Za-z]{1,3})\$?([0-9]+)$/.exec(String(address).trim());
  if (!match) throw new ToolError(`cell "${address}" is not an A1-style address such as B2`);
  let col = 0;
  for (const letter of match[1].toUpperCase()) col = col * 26 + (letter.charCodeAt(0) - 64);
  const row = Number(match[2]);
  if (col > MAX_COL || row < 1 || row > MAX_ROW) throw new ToolError(`cell "${address}" is outside the sheet (A1:XFD1048576)`);
  return { col, row };
}

/** "A1:D10" or "B2" -> { start, end } with start top-left and end bottom-right. */
export function parseRange(range) {
  const [first, second = first, extra] = String(range).split(':');
  if (extra !== undefined) throw new ToolError(`range "${range}" is not an A1-style range such as A1:D10`);
  const a = parseCell(first);
  const b = parseCell(second);
  return {
    start: { col: Math.min(a.col, b.col), row: Math.min(a.row, b.row) },
    end: { col: Math.max(a.col, b.col), row: Math.max(a.row, b.row) },
  };
}

/** { col: 2, row: 2 } -> "B2". */
export function formatCell({ col, row }) {
  if (col < 1 || col > MAX_COL || row < 1 || row > MAX_ROW) throw new ToolError(`cell at column ${col}, row ${row} is outside the sheet (A1:XFD1048576)`);
  let letters = '';
  for (let n = col; n > 0; n = Math.floor((n - 1) / 26)) letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return `${letters}${row}`;
}

export function formatRange(start, end) {
  return `${formatCell(start)}:${formatCell(end)}`;
}

/** A JSON value to an exceljs cell value: "=..." strings become formulas. */
export function toCellValue(value) {
  if (typeof value === 'string' && value.startsWith('=') && value.length > 1) return { formula: value.slice(1) };
  return value;
}

// One JSON value per cell: formulas as "=...", dates as ISO strings, rich text and links as their text.
export function readCell(cell, { preferResult = false } = {}) {
  const value = cell.value;
  if (value === null || value === undefined) return null;
  if (cell.formula) {
    const result = value.result;
    if (preferResult && result !== undefined && (typeof result !== 'object' || result instanceof Date)) return plain(result);
    return `=${cell.formula}`;
  }
  if (typeof value === 'object' && !(value instanceof Date)) {
    if (Array.isArray(value.richText)) return value.richText.map((run) => run.text).join('');
    if (value.text !== undefined) return typeof value.text === 'string' ? value.text : cell.text;
    if (value.error !== undefined) return value.error;
    return cell.text;
  }
  return plain(value);
}

function plain(value) {
  return value instanceof Date ? value.toISOString() : value;
}

/** One RFC 4180 CSV field. */
export function csvField(value) {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
