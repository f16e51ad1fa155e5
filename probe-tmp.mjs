import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
for (const auto of [true, false]) {
  const c = new Client({ name: 'p', version: '0' }, auto ? { versionNegotiation: { mode: 'auto' } } : {});
  await c.connect(new StdioClientTransport({ command: process.execPath, args: ['test/apps/faulty.js'] }));
  for (let i = 0; i < 300; i++) await c.callTool({ name: 'echo', arguments: { text: 'x' } });
  const n = 3000, t0 = performance.now();
  for (let i = 0; i < n; i++) await c.callTool({ name: 'echo', arguments: { text: 'x' } });
  console.log(auto ? 'auto' : 'plain', ((performance.now() - t0) / n).toFixed(3), 'ms/call faulty');
  await c.close();
  const d = new Client({ name: 'p', version: '0' }, auto ? { versionNegotiation: { mode: 'auto' } } : {});
  await d.connect(new StdioClientTransport({ command: process.execPath, args: ['examples/apps/image/server.js', '--root', '/tmp/imgroot'] }));
  for (let i = 0; i < 300; i++) await d.callTool({ name: 'info', arguments: { path: 'nope.png' } });
  const t1 = performance.now();
  for (let i = 0; i < n; i++) await d.callTool({ name: 'info', arguments: { path: 'nope.png' } });
  console.log(auto ? 'auto' : 'plain', ((performance.now() - t1) / n).toFixed(3), 'ms/call image info (isError)');
  await d.close();
}
