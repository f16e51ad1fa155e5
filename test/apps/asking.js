#!/usr/bin/env node
// Fixture MCP server (stdio, 2025-11-25 only) that asks its client for things
// a client may not offer, for the runner's client-feature tests.
//
//   node test/apps/asking.js
//
// Tools:
//   sample {}      sends `sampling/createMessage` whatever the client declared;
//                  answers with the JSON-RPC error it got back (code and message), as text
//   defaults {}    form elicitation whose fields are all optional with defaults;
//                  answers with the JSON of the elicitation result it got back
//   capabilities {}  answers with the JSON of the capabilities the client declared
//   task_only {}   listed with `execution.taskSupport: required`, while this server
//                  declares no tasks capability: a client must not call it plainly
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const DEFAULTS_REQUEST = {
  type: 'object',
  properties: {
    name: { type: 'string', default: 'John Doe' },
    age: { type: 'integer', default: 30 },
    status: { type: 'string', enum: ['active', 'inactive'], default: 'active' },
    verified: { type: 'boolean', default: true },
    nickname: { type: 'string' },
  },
  required: [],
};
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const EMPTY_INPUT = { type: 'object', properties: {}, additionalProperties: false };
const text = (value) => ({ content: [{ type: 'text', text: value }] });
const anyResult = { '~standard': { version: 1, vendor: 'fixture', validate: (value) => ({ value }) } };

const server = new McpServer({ name: 'asking', version: '1.0.0' }, { capabilities: { tools: {} } });
server.server.setRequestHandler('tools/list', () => ({
  tools: [
    { name: 'sample', description: 'Ask the client for a model completion, declared or not.', inputSchema: EMPTY_INPUT, annotations: READ_ONLY },
    { name: 'defaults', description: 'Ask a form question whose fields have defaults.', inputSchema: EMPTY_INPUT, annotations: READ_ONLY },
    { name: 'capabilities', description: 'Show the capabilities the client declared.', inputSchema: EMPTY_INPUT, annotations: READ_ONLY },
    { name: 'task_only', description: 'A tool that runs only as a task.', inputSchema: EMPTY_INPUT, annotations: READ_ONLY, execution: { taskSupport: 'required' } },
  ],
}));
server.server.setRequestHandler('tools/call', async (request, ctx) => {
  const { name } = request.params;
  if (name === 'sample') {
    try {
      const result = await ctx.mcpReq.send({ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 } }, anyResult);
      return text(`sampled: ${JSON.stringify(result)}`);
    } catch (error) {
      return text(`refused ${error.code}: ${error.message}`);
    }
  }
  if (name === 'defaults') {
    const result = await ctx.mcpReq.send({ method: 'elicitation/create', params: { message: 'Confirm your profile', requestedSchema: DEFAULTS_REQUEST } }, anyResult);
    return text(JSON.stringify(result));
  }
  if (name === 'capabilities') return text(JSON.stringify(server.server.getClientCapabilities() ?? {}));
  if (name === 'task_only') return text('called without a task');
  return { content: [{ type: 'text', text: `no tool ${name}` }], isError: true };
});

await server.connect(new StdioServerTransport());
process.stdin.once('end', () => server.close().finally(() => process.exit(0)));
