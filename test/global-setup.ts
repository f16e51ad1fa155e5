import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { build } from 'rolldown';
import { FIXTURE_SNAPSHOTS, repoRoot, type FixtureSnapshot } from './helpers/workspace.js';

// Once per `vitest run`: V8 startup snapshots of the app servers the suite starts most (faulty.js,
// some 200 times; shifting.js, some 40; the two demo apps, some 50). Each start was a Node process that
// spent most of its CPU loading the MCP SDK and zod (faulty 0.2 s, a demo app 0.35 s); from the
// snapshot it starts with them loaded (0.08 s, 0.15 s). The server is the same code in a real process:
// `node --snapshot-blob BLOB faulty.js FLAGS` runs the same main() as `node faulty.js FLAGS`.
//
// Each blob is kept under node_modules/.cache, named by a hash of what is in it (the fixture's files,
// the demo apps' files, the SDK's version, this Node), so it is built again only when one of them
// changes. Where one cannot be built, the tests start that app's script as it is, and say so.

const SHARED_SOURCES = [
  ...readdirSync(join(repoRoot, 'examples', 'apps'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.js'))
    .sort()
    .map((file) => join('examples', 'apps', file)),
  'node_modules/@modelcontextprotocol/server/package.json',
];

export default async function setup(): Promise<() => void> {
  // Every temp folder of the run (the tests', the runner's, the apps', the browser's) goes under one
  // folder that is removed at the end: the workers and every process they start inherit TMPDIR.
  // Vitest calls this once per project; the first call makes the folder (a nested one would be too
  // long a path for chromium's socket).
  const ownsTemp = process.env.RUNNER_SUITE_TEMP === undefined;
  const suiteTemp = (process.env.RUNNER_SUITE_TEMP ??= mkdtempSync(join(tmpdir(), 'runner-suite-')));
  process.env.TMPDIR = suiteTemp;
  // With NODE_EXTRA_CA_CERTS set, every Node process parses that bundle as it starts (about 40 ms of
  // CPU for the 140 certificates of a system bundle, against 20 ms for all the rest of a bare start),
  // and the suite starts some 700 of them. Its servers and clients are all on loopback, without TLS.
  delete process.env.NODE_EXTRA_CA_CERTS;
  const dir = join(repoRoot, 'node_modules', '.cache', 'runner-test');
  // The compiled code the spawned runner keeps between starts (src/cli/load-program.ts) would go to
  // the run's temp folder and be compiled again by every run: it is kept beside the snapshots instead.
  process.env.NODE_COMPILE_CACHE ??= join(dir, 'compile-cache');
  for (const fixture of FIXTURE_SNAPSHOTS) {
    const hash = createHash('sha256').update(process.version);
    const sources = readdirSync(join(repoRoot, 'test', 'apps')).filter((file) => file.startsWith(fixture.name) && file.endsWith('.js'));
    for (const file of [...sources.map((name) => join('test', 'apps', name)), ...SHARED_SOURCES]) hash.update(readFileSync(join(repoRoot, file)));
    const blob = join(dir, `${fixture.name}-${hash.digest('hex').slice(0, 16)}.blob`);
    try {
      if (!existsSync(blob)) await buildSnapshot(fixture, dir, blob);
      process.env[fixture.env] = blob;
    } catch (error) {
      console.warn(`test/global-setup.ts: no startup snapshot of test/apps/${fixture.name}.js (${(error as Error).message.split('\n')[0]}); the tests start the script itself`);
    }
  }
  return () => {
    if (ownsTemp) rmSync(suiteTemp, { recursive: true, force: true, maxRetries: 3 });
  };
}

async function buildSnapshot(fixture: FixtureSnapshot, dir: string, blob: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), `runner-${fixture.name}-snapshot-`));
  try {
    // A snapshot is built from one CommonJS script that requires only Node's own modules.
    const script = join(work, `${fixture.name}.cjs`);
    await build({
      input: join(repoRoot, 'test', 'apps', `${fixture.name}-snapshot.js`),
      platform: 'node',
      // What the demo apps load on first use stays outside, where it must: sharp (a native addon) and
      // their HTTP serving, whose node:http cannot be loaded while a snapshot is built.
      external: [/^node:/, 'sharp', /\/serve-http\.js$/],
      output: {
        file: script,
        format: 'cjs',
        codeSplitting: false,
        // import() cannot run in a process started from a snapshot: it becomes a require, and a
        // require of anything but Node's own modules goes to the one the entry sets up at start.
        dynamicImportInCjs: false,
        banner:
          "const __builtinRequire = require; require = (id) => (__builtinRequire('node:module').isBuiltin(id) ? __builtinRequire(id) : globalThis.__snapshotRequire(id));",
      },
      logLevel: 'silent',
    });
    const built = join(work, `${fixture.name}.blob`);
    execFileSync(process.execPath, ['--snapshot-blob', built, '--build-snapshot', script], { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] });
    renameSync(built, blob); // whole or not at all, for a concurrent run
    const stale = new RegExp(`^${fixture.name}-[0-9a-f]+\\.blob$`);
    for (const old of readdirSync(dir)) if (stale.test(old) && old !== basename(blob)) rmSync(join(dir, old), { force: true });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
