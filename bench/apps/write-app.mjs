#!/usr/bin/env node
// The app of (e): two tools that do the same thing with no I/O, and differ
// only in their annotations, so a runner calling them differs only in what
// the annotations make it do. `echo_write` is neither read-only nor
// idempotent: the runner journals every call of it (an intent synced to disk
// before the send, the outcome after). `echo` is read-only: nothing journaled.
//
//   node bench/apps/write-app.mjs
import { McpServer, fromJsonSchema } from '@modelcontextprotocol/server';
import { serveUntilClosed } from './serve-until-closed.mjs';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITES = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const INPUT = fromJsonSchema({
  type: 'object',
  properties: { text: { type: 'string' }, delayMs: { type: 'integer', minimum: 0, description: 'Ignored; accepted so raw-client.mjs can call `echo` as on faulty.js' } },
  additionalProperties: false,
});

// The hot path of both tools: no I/O, no logging, no timer.
const echo = async ({ text = '' }) => ({ content: [{ type: 'text', text }], structuredContent: { text } });

function createWriteServer() {
  const server = new McpServer({ name: 'write', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('echo', { description: 'Return `text` (read-only).', annotations: READ_ONLY, inputSchema: INPUT }, echo);
  server.registerTool('echo_write', { description: 'Return `text`; annotated as a write that is not idempotent.', annotations: WRITES, inputSchema: INPUT }, echo);
  return server;
}

serveUntilClosed('write-app', createWriteServer);
