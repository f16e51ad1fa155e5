// Load, save and navigate .xlsx workbooks (exceljs), with caller errors as ToolError.
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from './atomic-write.js';
import { lazy } from './lazy.js';
import { requireFile } from './paths.js';
import { ToolError } from './tool-result.js';

// exceljs loads lazily: a `server/discover` probe process then starts without it. Only its Workbook
// class: the package's entry also loads the streaming reader and writer (unzipper, archiver), some 380
// more CommonJS modules this app never uses, which doubled the CPU of the first call (about 150 ms).
// exceljs is pinned and has no `exports` map, so the file is part of what it ships.
const loadExcel = lazy(async () => ({ Workbook: (await import('exceljs/lib/doc/workbook.js')).default }));

/** An empty exceljs Workbook. */
export async function newWorkbook() {
  const ExcelJS = await loadExcel();
  return new ExcelJS.Workbook();
}

/** Read an existing .xlsx file; ToolError when it is missing or not a workbook. */
export async function loadWorkbook(file, pathArg) {
  await requireFile(file, pathArg);
  const workbook = await newWorkbook();
  try {
    await workbook.xlsx.load(await readFile(file));
  } catch {
    throw new ToolError(`not an .xlsx workbook: ${pathArg}`);
  }
  return workbook;
}

/** Write the workbook to `file` atomically. */
export async function saveWorkbook(workbook, file) {
  await writeFileAtomic(file, Buffer.from(await workbook.xlsx.writeBuffer()));
}

/** Worksheet names in workbook order. */
export function sheetNames(workbook) {
  return workbook.worksheets.map((worksheet) => worksheet.name);
}

// Excel compares sheet names case-insensitively.
export function findSheet(workbook, name) {
  return workbook.worksheets.find((worksheet) => worksheet.name.toLowerCase() === name.toLowerCase());
}

/** The named worksheet (default: the first); ToolError naming the sheets that exist otherwise. */
export function pickSheet(workbook, name) {
  const worksheet = name === undefined ? workbook.worksheets[0] : findSheet(workbook, name);
  if (!worksheet) {
    const known = sheetNames(workbook).map((n) => `"${n}"`).join(', ') || 'none';
    throw new ToolError(name === undefined ? 'the workbook has no worksheets' : `no worksheet "${name}"; the workbook has ${known}`);
  }
  return worksheet;
}

/** ToolError unless `name` is a worksheet name Excel accepts. */
export function assertSheetName(name) {
  if (/[[\]:*?/\\]/.test(name) || name.startsWith("'") || name.endsWith("'")) {
    throw new ToolError(`worksheet name "${name}" is not allowed in Excel: no [ ] : * ? / \\ and no leading or trailing '`);
  }
}
