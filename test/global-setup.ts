import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { build } from 'rolldown';
import { FAULTY_BLOB_ENV, repoRoot } from './helpers/workspace.js';

// Once per `vitest run`: a V8 startup snapshot of the faulty fixture server. Some 200 tests start
// that server, each a Node process that spent most of its 0.2 s of CPU loading the MCP SDK and zod;
// from the snapshot it starts with them loaded (about 0.08 s). The server is the same code in a real
// process: `node --snapshot-blob BLOB faulty.js FLAGS` runs the same main() as `node faulty.js FLAGS`.
//
// The blob is kept under node_modules/.cache, named by a hash of what is in it (the fixture's files,
// the SDK's version, this Node), so it is built again only when one of them changes. Where it cannot
// be built, the tests start faulty.js as it is, and say so.

const SOURCES = ['test/apps/faulty.js', 'test/apps/faulty-main.js', 'test/apps/faulty-snapshot.js', 'test/apps/faulty-tools.js', 'test/apps/faulty-flags.js', 'examples/apps/lib/tool-result.js', 'node_modules/@modelcontextprotocol/server/package.json'];

export default async function setup(): Promise<void> {
  const hash = createHash('sha256').update(process.version);
  for (const file of SOURCES) hash.update(readFileSync(join(repoRoot, file)));
  const dir = join(repoRoot, 'node_modules', '.cache', 'runner-test');
  const blob = join(dir, `faulty-${hash.digest('hex').slice(0, 16)}.blob`);
  try {
    if (!existsSync(blob)) await buildSnapshot(dir, blob);
    process.env[FAULTY_BLOB_ENV] = blob;
  } catch (error) {
    console.warn(`test/global-setup.ts: no startup snapshot of the faulty app (${(error as Error).message.split('\n')[0]}); the tests start test/apps/faulty.js itself`);
  }
}

async function buildSnapshot(dir: string, blob: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'runner-faulty-snapshot-'));
  try {
    // A snapshot is built from one CommonJS script that requires only Node's own modules.
    const script = join(work, 'faulty.cjs');
    await build({
      input: join(repoRoot, 'test', 'apps', 'faulty-snapshot.js'),
      platform: 'node',
      external: [/^node:/],
      output: { file: script, format: 'cjs', codeSplitting: false },
      logLevel: 'silent',
    });
    const built = join(work, 'faulty.blob');
    execFileSync(process.execPath, ['--snapshot-blob', built, '--build-snapshot', script], { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] });
    renameSync(built, blob); // whole or not at all, for a concurrent run
    for (const old of readdirSync(dir)) if (/^faulty-.*\.blob$/.test(old) && old !== basename(blob)) rmSync(join(dir, old), { force: true });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
