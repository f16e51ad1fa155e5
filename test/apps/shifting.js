#!/usr/bin/env node
// Fixture MCP server (stdio) whose tools are whatever a JSON file says when it
// starts, for the lockfile tests: a test rewrites the file between runs to
// change a tool under a workflow.
//
//   node test/apps/shifting.js TOOLS.json CALLS.log [NEXT.json]
//
// TOOLS.json: { "server"?: { "name", "version" }, "tools": [ { "name", "description",
// "inputSchema", "annotations"? } ] }. Every tools/call appends `<name> <arguments JSON>`
// as a line to CALLS.log and answers `ok <name>`. With NEXT.json, the first call
// switches to its tools mid-run: it sends notifications/tools/list_changed, then
// answers at once, as a server would (the client lists the tools again when it
// next needs them).
import { main } from './shifting-main.js';

await main();
