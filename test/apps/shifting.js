#!/usr/bin/env node
// Fixture MCP server (stdio) whose tools are whatever a JSON file says when it
// starts, for the lockfile tests: a test rewrites the file between runs to
// change a tool under a workflow.
//
//   node test/apps/shifting.js TOOLS.json CALLS.log
//
// TOOLS.json: { "server"?: { "name", "version" }, "tools": [ { "name", "description",
// "inputSchema", "annotations"? } ] }. Every tools/call appends `<name> <arguments JSON>`
// as a line to CALLS.log and answers `ok <name>`.
import { appendFileSync, readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const [toolsFile, callsFile] = process.argv.slice(2);
const { server: info = { name: 'shifting', version: '1.0.0' }, tools } = JSON.parse(readFileSync(toolsFile, 'utf8'));

const server = new McpServer(info, { capabilities: { tools: {} } });
server.server.setRequestHandler('tools/list', () => ({ tools }));
server.server.setRequestHandler('tools/call', (request) => {
  const { name, arguments: args = {} } = request.params;
  appendFileSync(callsFile, `${name} ${JSON.stringify(args)}\n`);
  return { content: [{ type: 'text', text: `ok ${name}` }] };
});

await server.connect(new StdioServerTransport());
process.stdin.once('end', () => server.close().finally(() => process.exit(0)));
