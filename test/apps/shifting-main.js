// The shifting fixture server's process (see shifting.js). Nothing runs on import: shifting.js runs
// main(), and so does the startup snapshot the test suite builds of it (shifting-snapshot.js).
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createShiftingServer } from './shifting-server.js';

export async function main() {
  const server = createShiftingServer(process.argv.slice(2));
  await server.connect(new StdioServerTransport());
  process.stdin.once('end', () => server.close().finally(() => process.exit(0)));
}
