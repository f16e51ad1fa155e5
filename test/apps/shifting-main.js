// The shifting fixture server's process (see shifting.js). Nothing runs on import: shifting.js runs
// main(), and so does the startup snapshot the test suite builds of it (shifting-snapshot.js).
import { appendFileSync, readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

export async function main() {
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
}
