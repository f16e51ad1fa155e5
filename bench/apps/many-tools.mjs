#!/usr/bin/env node
// The app of (g)'s tool-list figure: one stdio server with COUNT tools
// (default 10,000), `tool_0` … `tool_<COUNT-1>`, each read-only, each taking
// `{text?}` and returning it. Nothing else: what it tests is a long tools/list.
//
//   node bench/apps/many-tools.mjs [COUNT]
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { serveUntilClosed } from './serve-until-closed.mjs';

const count = Number(process.argv[2] ?? 10_000);
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const INPUT = fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false });
const echo = async ({ text = '' }) => ({ content: [{ type: 'text', text }], structuredContent: { text } });

function createManyToolsServer() {
  const server = new McpServer({ name: 'many-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
  for (let i = 0; i < count; i++) {
    server.registerTool(`tool_${i}`, { description: `Return \`text\` (tool ${i} of ${count}).`, annotations: READ_ONLY, inputSchema: INPUT }, echo);
  }
  return server;
}

serveUntilClosed('many-tools', createManyToolsServer);
