// Demo MCP app "sheet": creates and edits .xlsx workbooks with exceljs.
// Works only inside the artifacts root; see ../README.md for flags and annotations.
// The server's tools; server.js starts it. createSheetServer({ root }) returns a fresh McpServer each call.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { McpServer } from '@modelcontextprotocol/server';
import { withFileLock, writeFileAtomic } from '../lib/atomic-write.js';
import { lazy } from '../lib/lazy.js';
import { requireFile, resolveInsideRoot } from '../lib/paths.js';
import { ToolError, registerJsonTool } from '../lib/tool-result.js';
import { csvField, formatCell, formatRange, parseCell, parseRange, readCell, toCellValue } from '../lib/cells.js';
import { assertSheetName, findSheet, loadWorkbook, newWorkbook, pickSheet, saveWorkbook, sheetNames } from '../lib/workbook.js';

const MAX_READ_CELLS = 100_000;
const PATH = { type: 'string', minLength: 1, pattern: '\\.xlsx$', description: 'Workbook path (.xlsx), absolute or relative to the artifacts root' };
const SHEET = { type: 'string', minLength: 1, maxLength: 31, description: 'Worksheet name; default: the first worksheet' };
const CELL_VALUE = { type: ['string', 'number', 'boolean', 'null'] };
const SHEETS_OUTPUT = {
  type: 'object',
  properties: { path: { type: 'string' }, sheets: { type: 'array', items: { type: 'string' } } },
  required: ['path', 'sheets'],
  additionalProperties: false,
};
// sharp loads lazily: a `server/discover` probe process then starts without it.
const loadSharp = lazy(async () => (await import('sharp')).default);
const hints = (readOnlyHint, destructiveHint, idempotentHint) => ({ readOnlyHint, destructiveHint, idempotentHint, openWorldHint: false });

export function createSheetServer({ root }) {
  const server = new McpServer({ name: 'sheet', version: '1.0.0' }, { capabilities: { tools: {} } });
  const inRoot = (pathArg, field) => resolveInsideRoot(root, pathArg, field);

  registerJsonTool(server, 'create_workbook', {
    title: 'Create workbook',
    description: 'Create a new .xlsx workbook with one worksheet, optionally with a bold title in A1. '
      + 'Refuses to replace an existing file unless `overwrite` is true.',
    annotations: hints(false, false, false),
    input: {
      type: 'object',
      properties: {
        path: PATH,
        title: { type: 'string' },
        sheet: { ...SHEET, default: 'Sheet1', description: 'Name of the first worksheet' },
        overwrite: { type: 'boolean', default: false },
      },
      required: ['path'],
      additionalProperties: false,
    },
    output: SHEETS_OUTPUT,
  }, async ({ path, title, sheet = 'Sheet1', overwrite = false }) => {
    const file = inRoot(path);
    assertSheetName(sheet);
    return withFileLock(file, async () => {
      if (!overwrite && existsSync(file)) throw new ToolError(`${path} already exists; pass overwrite: true to replace it`);
      const workbook = await newWorkbook();
      const worksheet = workbook.addWorksheet(sheet);
      if (title !== undefined) {
        worksheet.getCell('A1').value = title;
        worksheet.getCell('A1').font = { bold: true, size: 14 };
      }
      await saveWorkbook(workbook, file);
      return { path: file, sheets: sheetNames(workbook) };
    });
  });

  registerJsonTool(server, 'write_range', {
    title: 'Write cells',
    description: 'Write a 2D array of values starting at cell `start`, replacing what those cells held. '
      + 'Strings starting with "=" become formulas; null clears a cell.',
    annotations: hints(false, true, true),
    input: {
      type: 'object',
      properties: {
        path: PATH,
        sheet: SHEET,
        start: { type: 'string', pattern: '^\\$?[A-Za-z]{1,3}\\$?[0-9]+$', description: 'Top-left cell, e.g. A4' },
        values: { type: 'array', minItems: 1, items: { type: 'array', items: CELL_VALUE } },
      },
      required: ['path', 'start', 'values'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: { path: { type: 'string' }, sheet: { type: 'string' }, range: { type: 'string' }, cells: { type: 'integer' } },
      required: ['path', 'sheet', 'range', 'cells'],
      additionalProperties: false,
    },
  }, async ({ path, sheet, start, values }) => {
    const file = inRoot(path);
    const origin = parseCell(start);
    const width = Math.max(1, ...values.map((row) => row.length));
    const end = { col: origin.col + width - 1, row: origin.row + values.length - 1 };
    formatCell(end); // throws when the block runs past the sheet's last column or row
    return withFileLock(file, async () => {
      const workbook = await loadWorkbook(file, path);
      const worksheet = pickSheet(workbook, sheet);
      let cells = 0;
      values.forEach((rowValues, r) => rowValues.forEach((value, c) => {
        worksheet.getCell(origin.row + r, origin.col + c).value = toCellValue(value);
        cells++;
      }));
      await saveWorkbook(workbook, file);
      return { path: file, sheet: worksheet.name, range: formatRange(origin, end), cells };
    });
  });

  registerJsonTool(server, 'read_range', {
    title: 'Read cells',
    description: 'Read a range such as A1:D10 as a 2D array. Formula cells come back as "=FORMULA" strings, '
      + 'dates as ISO strings, empty cells as null.',
    annotations: hints(true, false, true),
    input: {
      type: 'object',
      properties: {
        path: PATH,
        sheet: SHEET,
        range: { type: 'string', pattern: '^\\$?[A-Za-z]{1,3}\\$?[0-9]+(:\\$?[A-Za-z]{1,3}\\$?[0-9]+)?$', description: 'e.g. A1:D10' },
      },
      required: ['path', 'range'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: {
        path: { type: 'string' },
        sheet: { type: 'string' },
        range: { type: 'string' },
        values: { type: 'array', items: { type: 'array', items: CELL_VALUE } },
      },
      required: ['path', 'sheet', 'range', 'values'],
      additionalProperties: false,
    },
  }, async ({ path, sheet, range }) => {
    const file = inRoot(path);
    const { start, end } = parseRange(range);
    const cellCount = (end.row - start.row + 1) * (end.col - start.col + 1);
    if (cellCount > MAX_READ_CELLS) throw new ToolError(`range ${range} has ${cellCount} cells; read at most ${MAX_READ_CELLS} at a time`);
    const worksheet = pickSheet(await loadWorkbook(file, path), sheet);
    const values = [];
    for (let row = start.row; row <= end.row; row++) {
      const line = [];
      for (let col = start.col; col <= end.col; col++) line.push(readCell(worksheet.getCell(row, col)));
      values.push(line);
    }
    return { path: file, sheet: worksheet.name, range: formatRange(start, end), values };
  });

  registerJsonTool(server, 'insert_image', {
    title: 'Insert image',
    description: 'Anchor a PNG or JPEG image with its top-left corner at `cell`. Size defaults to the image\'s own '
      + 'pixels; giving only width or height keeps the aspect ratio. Each call adds another image.',
    annotations: hints(false, false, false),
    input: {
      type: 'object',
      properties: {
        path: PATH,
        sheet: SHEET,
        image: { type: 'string', minLength: 1, description: 'PNG or JPEG file, absolute or relative to the artifacts root' },
        cell: { type: 'string', pattern: '^\\$?[A-Za-z]{1,3}\\$?[0-9]+$', description: 'Top-left cell, e.g. B2' },
        width: { type: 'integer', minimum: 1, maximum: 10000, description: 'Pixels' },
        height: { type: 'integer', minimum: 1, maximum: 10000, description: 'Pixels' },
      },
      required: ['path', 'image', 'cell'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: {
        path: { type: 'string' },
        sheet: { type: 'string' },
        cell: { type: 'string' },
        image: { type: 'string' },
        width: { type: 'integer' },
        height: { type: 'integer' },
      },
      required: ['path', 'sheet', 'cell', 'image', 'width', 'height'],
      additionalProperties: false,
    },
  }, async ({ path, sheet, image, cell, width, height }) => {
    const file = inRoot(path);
    const imageFile = inRoot(image, 'image');
    const anchor = parseCell(cell);
    await requireFile(imageFile, image);
    const buffer = await readFile(imageFile);
    const sharp = await loadSharp();
    const { format, width: naturalWidth, height: naturalHeight } = await sharp(buffer).metadata().catch(() => ({}));
    if (format !== 'png' && format !== 'jpeg') throw new ToolError(`image ${image} is not a PNG or JPEG file`);
    const size = {
      width: width ?? (height ? Math.round((height * naturalWidth) / naturalHeight) : naturalWidth),
      height: height ?? (width ? Math.round((width * naturalHeight) / naturalWidth) : naturalHeight),
    };
    return withFileLock(file, async () => {
      const workbook = await loadWorkbook(file, path);
      const worksheet = pickSheet(workbook, sheet);
      const imageId = workbook.addImage({ buffer, extension: format });
      // exceljs anchors are 0-based: B2 is { col: 1, row: 1 }.
      worksheet.addImage(imageId, { tl: { col: anchor.col - 1, row: anchor.row - 1 }, ext: size, editAs: 'oneCell' });
      await saveWorkbook(workbook, file);
      return { path: file, sheet: worksheet.name, cell: formatCell(anchor), image: imageFile, ...size };
    });
  });

  // add_sheet and delete_sheet: the same input, the same locked load → change → save.
  const sheetNameInput = (description) => ({
    type: 'object',
    properties: { path: PATH, name: { ...SHEET, description } },
    required: ['path', 'name'],
    additionalProperties: false,
  });
  const changeSheets = (path, change) => {
    const file = inRoot(path);
    return withFileLock(file, async () => {
      const workbook = await loadWorkbook(file, path);
      change(workbook);
      await saveWorkbook(workbook, file);
      return { path: file, sheets: sheetNames(workbook) };
    });
  };

  registerJsonTool(server, 'add_sheet', {
    title: 'Add worksheet',
    description: 'Add an empty worksheet at the end. Refuses a name that already exists.',
    annotations: hints(false, false, false),
    input: sheetNameInput('Name of the new worksheet'),
    output: SHEETS_OUTPUT,
  }, async ({ path, name }) => {
    assertSheetName(name);
    return changeSheets(path, (workbook) => {
      if (findSheet(workbook, name)) throw new ToolError(`worksheet "${name}" already exists in ${path}`);
      workbook.addWorksheet(name);
    });
  });

  registerJsonTool(server, 'delete_sheet', {
    title: 'Delete worksheet',
    description: 'Delete a worksheet and everything on it. Refuses to delete the last worksheet.',
    annotations: hints(false, true, false),
    input: sheetNameInput('Name of the worksheet to delete'),
    output: SHEETS_OUTPUT,
  }, async ({ path, name }) =>
    changeSheets(path, (workbook) => {
      const worksheet = pickSheet(workbook, name);
      if (workbook.worksheets.length === 1) throw new ToolError(`worksheet "${name}" is the only one in ${path}; a workbook needs at least one`);
      workbook.removeWorksheet(worksheet.id);
    }));

  registerJsonTool(server, 'export_csv', {
    title: 'Export CSV',
    description: 'Write one worksheet as RFC 4180 CSV to `out`. Formula cells export their cached result when '
      + 'the file has one, else "=FORMULA".',
    annotations: hints(false, false, true),
    input: {
      type: 'object',
      properties: { path: PATH, sheet: SHEET, out: { type: 'string', minLength: 1, description: 'CSV file to write' } },
      required: ['path', 'out'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: { path: { type: 'string' }, rows: { type: 'integer' } },
      required: ['path', 'rows'],
      additionalProperties: false,
    },
  }, async ({ path, sheet, out }) => {
    const file = inRoot(path);
    const target = inRoot(out, 'out');
    if (target === file) throw new ToolError('`out` must differ from `path`: export_csv never replaces the workbook');
    const worksheet = pickSheet(await loadWorkbook(file, path), sheet);
    const lines = [];
    for (let row = 1; row <= worksheet.rowCount; row++) {
      const cells = [];
      for (let col = 1; col <= worksheet.columnCount; col++) cells.push(csvField(readCell(worksheet.getCell(row, col), { preferResult: true })));
      lines.push(cells.join(','));
    }
    await writeFileAtomic(target, lines.map((line) => `${line}\r\n`).join(''));
    return { path: target, rows: lines.length };
  });

  return server;
}

