import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileCacheFile, readBundleInfo } from '../../dist/cli/load-program.js';
import { createWorkspace, repoRoot, runCli } from '../helpers/workspace.js';

// The spawned CLI keeps the bundle's compiled code between starts (src/cli/load-program.ts) on a
// Node without a compile cache of its own, as this suite's Node 20 is. A command that finds every
// chunk it loads in the cache accepted by V8 compiles nothing afresh and so does not write the file
// again: that is what shows the cache was used.

const bundle = JSON.parse(readFileSync(join(repoRoot, 'dist', 'cli', 'bundle', 'bundle.json'), 'utf8')) as { id: string };

function setup() {
  const ws = createWorkspace('');
  ws.write('wf.yaml', 'name: wf\nsteps:\n  - { id: save, uses: runner.save, with: { name: a.txt, content: x } }\n');
  const cacheRoot = mkdtempSync(join(tmpdir(), 'runner-compile-cache-test-'));
  const folder = join(cacheRoot, 'runner');
  // This process runs with the same V8 flags as the commands it starts, so the name is theirs too.
  const file = compileCacheFile({ NODE_COMPILE_CACHE: cacheRoot }, bundle.id);
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd: ws.dir, env: { NODE_COMPILE_CACHE: cacheRoot, ...env } });
  return { ws, cacheRoot, folder, file, cli };
}

/** The bundle's files whose compiled code the cache file holds: those the commands run with it loaded. */
function cachedChunks(file: string): string[] {
  const data = readFileSync(file);
  return Object.keys(JSON.parse(data.toString('utf8', 4, 4 + data.readUInt32LE(0))) as Record<string, unknown>);
}

function holdsMcpSdk(chunk: string): boolean {
  return readFileSync(join(repoRoot, 'dist', 'cli', 'bundle', chunk), 'utf8').includes('node_modules/@modelcontextprotocol/client/');
}

describe.concurrent('the compiled code of the CLI bundle', () => {
  it('is written on the first start, private to the user, and used as it is by the next', async ({ expect }) => {
    const { folder, file, cli } = setup();
    const first = await cli(['validate', 'wf.yaml']);
    expect(first.code).toBe(0);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Reading files is all `validate` and `auth status` do: neither loads the MCP SDK.
    expect((await cli(['auth', 'status'])).code).toBe(0);
    expect(cachedChunks(file).filter(holdsMcpSdk)).toEqual([]);
    const written = readFileSync(file);
    const again = await cli(['validate', 'wf.yaml']);
    expect(again).toMatchObject({ code: 0, stdout: first.stdout, stderr: first.stderr });
    expect(readFileSync(file).equals(written)).toBe(true);
    // A command that loads more of the bundle adds the chunks it compiled.
    expect((await cli(['run', 'wf.yaml'])).code).toBe(0);
    expect(statSync(file).size).toBeGreaterThan(written.length);
    expect(cachedChunks(file).filter(holdsMcpSdk)).toHaveLength(1);
    expect(readdirSync(folder)).toEqual([basename(file)]);
  });

  it("keeps the files of the last builds used before this one, and removes older ones and dead writers' temp files", async ({ expect }) => {
    const { folder, file, cli } = setup();
    mkdirSync(folder, { mode: 0o700 });
    const old = (name: string, secondsAgo: number) => {
      writeFileSync(join(folder, name), 'code of another build');
      const at = Date.now() / 1000 - secondsAgo;
      utimesSync(join(folder, name), at, at);
    };
    old('1.0-aaaa.cache', 400);
    old('1.0-bbbb.cache', 300);
    old('1.0-cccc.cache', 200);
    old('1.0-dddd.cache', 100);
    old('1.0-dddd.cache.123.tmp', 3600); // its writer died an hour ago
    old('1.0-dddd.cache.456.tmp', 5); // still being written
    expect((await cli(['validate', 'wf.yaml'])).code).toBe(0);
    expect(existsSync(file)).toBe(true);
    expect(readdirSync(folder).sort()).toEqual(['1.0-cccc.cache', '1.0-dddd.cache', '1.0-dddd.cache.456.tmp', basename(file)].sort());
  });

  it('is kept per set of V8 flags, so starts with and without a heap size in NODE_OPTIONS in turn each find theirs', async ({ expect }) => {
    // V8 refuses code compiled under other flags, a heap size included: one shared file would be compiled
    // afresh and written again at every start. Node's own options are no V8 flags and share the file.
    const { folder, file, cli } = setup();
    const heap = { NODE_OPTIONS: '--max-old-space-size=3000' };
    expect((await cli(['validate', 'wf.yaml'])).code).toBe(0);
    expect((await cli(['validate', 'wf.yaml'], heap)).code).toBe(0);
    const files = readdirSync(folder).sort();
    expect(files).toHaveLength(2);
    expect(files).toContain(basename(file));
    const written = files.map((name) => readFileSync(join(folder, name)));
    expect((await cli(['validate', 'wf.yaml'])).code).toBe(0);
    expect((await cli(['validate', 'wf.yaml'], heap)).code).toBe(0);
    expect((await cli(['validate', 'wf.yaml'], { NODE_OPTIONS: '--no-deprecation' })).code).toBe(0);
    expect(readdirSync(folder).sort()).toEqual(files);
    expect(files.map((name, index) => readFileSync(join(folder, name)).equals(written[index]!))).toEqual([true, true]);
  });

  it('counts as used when a start reads it: a file not written for hours is touched, and pruning keeps it', async ({ expect }) => {
    const { folder, file, cli } = setup();
    expect((await cli(['validate', 'wf.yaml'])).code).toBe(0);
    const written = readFileSync(file);
    const secondsAgo = (seconds: number) => Date.now() / 1000 - seconds;
    for (const [name, seconds] of [['1.0-aaaa.cache', 3600], ['1.0-bbbb.cache', 1800]] as const) {
      writeFileSync(join(folder, name), 'code of another build');
      utimesSync(join(folder, name), secondsAgo(seconds), secondsAgo(seconds));
    }
    utimesSync(file, secondsAgo(7200), secondsAgo(7200));
    expect((await cli(['validate', 'wf.yaml'])).code).toBe(0);
    expect(readFileSync(file).equals(written)).toBe(true);
    expect(statSync(file).mtimeMs).toBeGreaterThan(Date.now() - 600_000);
    // Another set of options writes a file of its own and prunes: the oldest other file goes, not the one in use.
    expect((await cli(['validate', 'wf.yaml'], { NODE_OPTIONS: '--max-old-space-size=3000' })).code).toBe(0);
    const names = readdirSync(folder);
    expect(names).toHaveLength(3);
    expect(names).toEqual(expect.arrayContaining([basename(file), '1.0-bbbb.cache']));
  });

  it('is compiled afresh and written again when the file is damaged, and the command does not notice', async ({ expect }) => {
    // What the command prints with no cache at all, its workspace's path left out (each damage has its own).
    const plain = setup();
    const printed = (result: { code: number | null; stdout: string; stderr: string }, dir: string) => ({
      code: result.code,
      stdout: result.stdout.replaceAll(dir, '<workspace>'),
      stderr: result.stderr.replaceAll(dir, '<workspace>'),
    });
    const reference = printed(await plain.cli(['validate', 'wf.yaml'], { NODE_DISABLE_COMPILE_CACHE: '1' }), plain.ws.dir);
    expect(reference.stdout).toContain('<workspace>');
    const damages = [
      Buffer.from('not a cache at all'),
      Buffer.alloc(0),
      // A well-formed index whose entries hold garbage: V8 refuses the code.
      (() => {
        const index = Buffer.from(JSON.stringify({ 'program.cjs': [0, 64] }));
        const length = Buffer.alloc(4);
        length.writeUInt32LE(index.length);
        return Buffer.concat([length, index, Buffer.alloc(64, 7)]);
      })(),
      // An index that points past the end of the file.
      (() => {
        const index = Buffer.from(JSON.stringify({ 'program.cjs': [0, 1e9] }));
        const length = Buffer.alloc(4);
        length.writeUInt32LE(index.length);
        return Buffer.concat([length, index]);
      })(),
    ];
    // Each damage in a cache folder of its own, all at once: they mostly wait on the processes.
    await Promise.all(
      damages.map(async (damage) => {
        const { ws, folder, file, cli } = setup();
        mkdirSync(folder, { mode: 0o700 });
        writeFileSync(file, damage);
        const result = await cli(['validate', 'wf.yaml']);
        expect(printed(result, ws.dir)).toEqual({ ...reference, code: 0 });
        const rewritten = readFileSync(file);
        expect(rewritten.length).toBeGreaterThan(1000);
        await cli(['validate', 'wf.yaml']);
        expect(readFileSync(file).equals(rewritten)).toBe(true);
      }),
    );
  });

  it('is neither read nor written in a folder that others may write to, nor when NODE_DISABLE_COMPILE_CACHE is set', async ({ expect }) => {
    const open = setup();
    mkdirSync(open.folder);
    chmodSync(open.folder, 0o777);
    writeFileSync(open.file, 'planted by someone else');
    expect((await open.cli(['validate', 'wf.yaml'])).code).toBe(0);
    expect(readFileSync(open.file, 'utf8')).toBe('planted by someone else');

    const disabled = setup();
    expect((await disabled.cli(['validate', 'wf.yaml'], { NODE_DISABLE_COMPILE_CACHE: '1' })).code).toBe(0);
    expect(existsSync(disabled.folder)).toBe(false);
  });
});

describe('the CLI bundle', () => {
  it('loads every one of its chunks, each in the same fresh process', async ({ expect }) => {
    // Most commands load only some chunks; one whose packages cannot be found beside it fails only
    // where it is loaded (jsonc-parser's UMD build once failed every config that imported a JSONC file).
    const dir = join(repoRoot, 'dist', 'cli', 'bundle');
    const chunks = readdirSync(dir).filter((name) => name.endsWith('.cjs'));
    expect(chunks.length).toBeGreaterThan(10);
    const script = `for (const chunk of ${JSON.stringify(chunks)}) require(${JSON.stringify(dir)} + '/' + chunk);`;
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (data) => (stderr += data));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('is ASCII in every chunk, so V8 holds each source as one byte a character', ({ expect }) => {
    // One character past U+007F (a `…` in the UI's String.raw script, which the bundler cannot escape)
    // makes V8 decode the whole chunk into a string of two bytes a character.
    const dir = join(repoRoot, 'dist', 'cli', 'bundle');
    const notAscii = readdirSync(dir)
      .filter((name) => name.endsWith('.cjs'))
      .flatMap((name) => {
        const text = readFileSync(join(dir, name), 'utf8');
        let at = 0;
        while (at < text.length && text.charCodeAt(at) <= 0x7f) at++;
        return at === text.length ? [] : [`${name}: ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 10))}`];
      });
    expect(notAscii).toEqual([]);
  });
});

describe('which program the CLI loads', () => {
  function distLike() {
    const dist = mkdtempSync(join(tmpdir(), 'runner-dist-'));
    const bundleDir = join(dist, 'cli', 'bundle');
    mkdirSync(bundleDir, { recursive: true });
    return { dist, bundleDir };
  }
  const at = (file: string, seconds: number) => utimesSync(file, seconds, seconds);

  it('is the bundle while tsc has not built since it was made, else the modules tsc wrote', () => {
    const { dist, bundleDir } = distLike();
    expect(readBundleInfo(bundleDir)).toBeUndefined(); // no bundle: tsc's modules
    writeFileSync(join(bundleDir, 'bundle.json'), JSON.stringify({ id: 'abc', entry: 'program.cjs' }));
    expect(readBundleInfo(bundleDir)).toEqual({ id: 'abc', entry: 'program.cjs' }); // no tsc state (an installed package)
    writeFileSync(join(dist, '.tsbuildinfo'), '{}');
    at(join(dist, '.tsbuildinfo'), 1_000);
    at(join(bundleDir, 'bundle.json'), 2_000);
    expect(readBundleInfo(bundleDir)?.id).toBe('abc');
    at(join(dist, '.tsbuildinfo'), 3_000); // `tsc` alone after `npm run build`: the bundle is stale
    expect(readBundleInfo(bundleDir)).toBeUndefined();
    writeFileSync(join(bundleDir, 'bundle.json'), '{"id": 1}');
    expect(readBundleInfo(bundleDir)).toBeUndefined();
  });
});
