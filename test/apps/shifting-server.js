// The shifting fixture server itself (see shifting.js), for its process (shifting-main.js) and for
// tests that serve it in their own process (test/helpers/fixtures-in-memory.ts).
import { appendFileSync, readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';

/**
 * A server that lists the tools of `toolsFile` as they are when it is created (with the server
 * info there, if any), logs each call to `callsFile` as `name JSON-arguments`, and, given
 * `nextFile`, lists that file's tools from its first call on: the notice that the list changed
 * goes out before that call's answer.
 * @param {string[]} files `[toolsFile, callsFile, nextFile?]`, as the process takes them
 */
export function createShiftingServer(files) {
  const [toolsFile, callsFile, nextFile] = files;
  const readTools = (file) => JSON.parse(readFileSync(file, 'utf8'));
  const { server: info = { name: 'shifting', version: '1.0.0' }, tools: first } = readTools(toolsFile);
  let tools = first;
  let next = nextFile;

  const server = new McpServer(info, { capabilities: { tools: { listChanged: true } } });
  server.server.setRequestHandler('tools/list', () => ({ tools }));
  server.server.setRequestHandler('tools/call', async (request) => {
    const { name, arguments: args = {} } = request.params;
    appendFileSync(callsFile, `${name} ${JSON.stringify(args)}\n`);
    if (next) {
      // As a server would: the tools change, the notice goes out, and then this answer, at once.
      tools = readTools(next).tools;
      next = undefined;
      await server.server.notification({ method: 'notifications/tools/list_changed' });
    }
    return { content: [{ type: 'text', text: `ok ${name}` }] };
  });
  return server;
}
