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
// switches to its tools mid-run: it sends notifications/tools/list_changed and
// answers once the client has listed the tools again.
import { appendFileSync, readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const [toolsFile, callsFile, nextFile] = process.argv.slice(2);
const readTools = (file) => JSON.parse(readFileSync(file, 'utf8'));
const { server: info = { name: 'shifting', version: '1.0.0' }, tools: first } = readTools(toolsFile);
let tools = first;
let next = nextFile;
let listed = () => {};

const server = new McpServer(info, { capabilities: { tools: { listChanged: true } } });
server.server.setRequestHandler('tools/list', () => {
  listed();
  return { tools };
});
server.server.setRequestHandler('tools/call', async (request) => {
  const { name, arguments: args = {} } = request.params;
  appendFileSync(callsFile, `${name} ${JSON.stringify(args)}\n`);
  if (next) {
    tools = readTools(next).tools;
    next = undefined;
    const relisted = new Promise((resolve) => (listed = resolve));
    await server.server.notification({ method: 'notifications/tools/list_changed' });
    await relisted;
    // One turn of the event loop: the new list goes out before this answer.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { content: [{ type: 'text', text: `ok ${name}` }] };
});

await server.connect(new StdioServerTransport());
process.stdin.once('end', () => server.close().finally(() => process.exit(0)));
