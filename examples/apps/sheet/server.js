#!/usr/bin/env node
// Demo MCP app "sheet": creates and edits .xlsx workbooks with exceljs.
// Works only inside the artifacts root; see ../README.md for flags and annotations.
import { runApp } from '../lib/serve.js';
import { createSheetServer } from './app.js';

await runApp({ name: 'sheet', createServer: createSheetServer });
