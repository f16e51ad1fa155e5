// The baseline: the raw @modelcontextprotocol/client SDK against the same app,
// with no runner in between. Each benchmark runs its runner side against these.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const CLIENT_INFO = { name: 'raw-bench', version: '0.0.0' };

/**
 * Spawns the app and connects. With `prior` (a cached era verdict) the app is
 * spawned once and nothing is probed; without it the SDK probes the era.
 * `listTools: true` fills the SDK's tool cache as the runner's discovery does,
 * so both sides' SDK clients do the same per-call work (output-schema check).
 */
export async function connectRaw({ command, args }, prior, { listTools = false } = {}) {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } });
  const transport = new StdioClientTransport({ command, args, stderr: 'ignore' });
  await client.connect(transport, prior ? { prior } : {});
  if (listTools) await client.listTools();
  return client;
}

/** The verdict to cache after a connect: `{ kind: 'modern', discover }` or legacy. */
export function verdictOf(client) {
  const discover = client.getDiscoverResult();
  return client.getProtocolEra() === 'modern' && discover ? { kind: 'modern', discover } : { kind: 'legacy' };
}

/** `count` sequential echo calls, each passing the previous call's text on. Returns ms. */
export async function runRawChain(client, count, delayMs) {
  const started = performance.now();
  let text = 'x';
  for (let i = 0; i < count; i++) {
    const result = await client.callTool({ name: 'echo', arguments: { text, delayMs } });
    text = result.structuredContent.text;
  }
  return performance.now() - started;
}

/** `count` independent echo calls, `inFlight` loops pulling from one counter. Returns ms. */
export async function runRawFanout(client, count, inFlight, delayMs) {
  const started = performance.now();
  let next = 0;
  const loop = async () => {
    while (next < count) {
      const i = next++;
      await client.callTool({ name: 'echo', arguments: { text: `item ${i}`, delayMs } });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  return performance.now() - started;
}
