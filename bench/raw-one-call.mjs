// (c)'s raw side as its own process: spawn the app, connect with a cached
// `prior` (no probe, one spawn), call echo once, close, exit.
//
//   node bench/raw-one-call.mjs PRIOR.json COMMAND [ARGS...]
import { readFileSync } from 'node:fs';
import { connectRaw } from './raw-client.mjs';

const [priorFile, command, ...args] = process.argv.slice(2);
const prior = JSON.parse(readFileSync(priorFile, 'utf8'));
const client = await connectRaw({ command, args }, prior);
const result = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
if (result.structuredContent?.text !== 'hello') {
  process.stderr.write(`unexpected result: ${JSON.stringify(result)}\n`);
  process.exitCode = 1;
}
await client.close();
