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

  await server.connect(new StdioServerTransport());
  process.stdin.once('end', () => server.close().finally(() => process.exit(0)));
}
