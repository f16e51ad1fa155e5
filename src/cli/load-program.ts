import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

type Program = typeof import('./program.js');

/** What scripts/bundle-cli.mjs writes beside the bundle. */
export interface BundleInfo {
  id: string;
  entry: string;
}

/** A cache file larger than this is not read (the bundle's whole compiled code is a few MB). */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;
/** A cache file read at a start and not written for this long gets its time set to now (see pruneCacheFolder). */
const TOUCH_AFTER_MS = 60 * 60 * 1000;
/** A temp file of the cache older than this was left by a writer that died. */
const STALE_TEMP_MS = 10 * 60 * 1000;
/** Cache files kept in the folder: this build's and those of the builds (or Nodes) used last before it. */
const KEPT_BUILDS = 3;

/**
 * The CLI's program: the bundle `npm run build` makes (dist/cli/bundle/, see
 * scripts/bundle-cli.mjs) when there is one and tsc has not built since,
 * else the modules tsc wrote. Its compiled code is kept on disk and reused
 * while its files are unchanged: by Node's own compile cache from 22.1 on (in
 * the temp folder or NODE_COMPILE_CACHE; on Node 22 a one-step run took 146–172
 * ms instead of 184–202 ms), before that by keepCompiledCode for the bundle.
 * NODE_DISABLE_COMPILE_CACHE=1 turns either off.
 */
export async function loadProgram(env: NodeJS.ProcessEnv = process.env): Promise<Program> {
  const enableNodeCache = (Module as { enableCompileCache?: () => unknown }).enableCompileCache;
  enableNodeCache?.(); // it honours NODE_DISABLE_COMPILE_CACHE itself
  const bundleDir = fileURLToPath(new URL('./bundle', import.meta.url));
  const bundle = readBundleInfo(bundleDir);
  if (!bundle) return import('./program.js');
  if (!enableNodeCache && !env.NODE_DISABLE_COMPILE_CACHE) keepCompiledCode(bundleDir, compileCacheFile(env, bundle.id));
  return createRequire(import.meta.url)(join(bundleDir, bundle.entry)) as Program;
}

/** bundle.json, unless there is none or tsc has written dist/ since the bundle was made (then the bundle is stale). */
export function readBundleInfo(bundleDir: string): BundleInfo | undefined {
  const file = join(bundleDir, 'bundle.json');
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as BundleInfo;
    if (typeof info.id !== 'string' || typeof info.entry !== 'string') return undefined;
    const compiled = statSync(join(bundleDir, '..', '..', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
    return compiled > statSync(file).mtimeMs ? undefined : info;
  } catch {
    return undefined;
  }
}

/**
 * One file per V8 version, build and set of V8 flags, in `runner/` of NODE_COMPILE_CACHE when set, else in a
 * folder of this user's in the temp folder. V8 refuses code compiled under other flags (even a heap size given
 * in NODE_OPTIONS), so starts with different flags taking turns on one file would each compile it all afresh
 * and write it again; their own files keep each warm. Node's own options (--require, --inspect) change nothing.
 */
export function compileCacheFile(env: NodeJS.ProcessEnv, buildId: string): string {
  const folder = env.NODE_COMPILE_CACHE ? join(env.NODE_COMPILE_CACHE, 'runner') : join(tmpdir(), `runner-compile-cache-${process.getuid?.() ?? 'user'}`);
  return join(folder, `${process.versions.v8}-${buildId}-${v8FlagHash()}.cache`);
}

/**
 * The hash of V8's flags that V8 writes into compiled code and checks before taking it: the fourth 32-bit
 * word of its header (after a magic number, a version hash and a source hash). Should that layout change,
 * the name is merely less apt: V8 still checks what it takes.
 */
function v8FlagHash(): string {
  try {
    const header = new vm.Script('0').createCachedData();
    return header.length >= 16 ? header.readUInt32LE(12).toString(16).padStart(8, '0') : 'flags';
  } catch {
    return 'flags'; // nothing here may fail a command
  }
}

/**
 * Compiles the bundle's files with V8's code cache. The cache is one file:
 * a 4-byte length, a JSON index `{ "<chunk file>": [offset, length] }`, then
 * the compiled code of each chunk. A chunk's code is handed to V8 when it is
 * there (V8 checks that it fits the source and this V8, and compiles afresh
 * when not); when the process exits, the file is written again (temp file,
 * fsync, rename) if a chunk was compiled afresh, with that chunk's code as this
 * run left it (the functions it ran compiled too). The folder is used only if
 * it is this user's own and nobody else may write to it. Nothing here can fail
 * a command: a cache that cannot be read or written is not used.
 */
function keepCompiledCode(bundleDir: string, cacheFile: string): void {
  const folder = dirname(cacheFile);
  const trusted = ownFolder(folder);
  if (trusted === false) return;
  const cached = trusted ? readCacheFile(cacheFile) : new Map<string, Buffer>();
  const fresh = new Map<string, vm.Script>();
  const internals = Module.prototype as unknown as ModuleInternals;
  const compile = internals._compile;
  internals._compile = function (this: ModuleInternals, content: string, filename: string) {
    if (dirname(filename) !== bundleDir || content.startsWith('#!')) return compile.call(this, content, filename);
    const name = basename(filename);
    const cachedData = cached.get(name);
    const script = new vm.Script(Module.wrap(content), { filename, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
    if (cachedData === undefined || script.cachedDataRejected) {
      cached.delete(name);
      fresh.set(name, script);
    }
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, createRequire(filename), this, filename, bundleDir);
  };
  process.once('exit', () => {
    if (fresh.size > 0) writeCacheFile(cacheFile, cached, fresh);
  });
}

/** What Node's Module has and its types leave out: CommonJS files are compiled through `_compile`. */
interface ModuleInternals {
  exports: unknown;
  _compile: (this: ModuleInternals, content: string, filename: string) => unknown;
}

/** True: the folder is this user's and only theirs; undefined: it does not exist yet; false: it must not be used. */
function ownFolder(dir: string): boolean | undefined {
  const stat = lstatSync(dir, { throwIfNoEntry: false });
  if (!stat) return undefined;
  return stat.isDirectory() && (process.getuid === undefined || stat.uid === process.getuid()) && (stat.mode & 0o022) === 0;
}

function readCacheFile(file: string): Map<string, Buffer> {
  const entries = new Map<string, Buffer>();
  try {
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat || stat.size > MAX_CACHE_BYTES) return entries;
    const data = readFileSync(file);
    // Pruning keeps the files used last by their time: one that is read at every start but has nothing
    // to add is touched now and then, so that it is not taken for unused.
    const now = Date.now();
    if (now - stat.mtimeMs > TOUCH_AFTER_MS) touch(file, now);
    const indexEnd = 4 + data.readUInt32LE(0);
    const index = JSON.parse(data.toString('utf8', 4, indexEnd)) as Record<string, [number, number]>;
    for (const [name, [offset, length]] of Object.entries(index)) {
      if (Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && indexEnd + offset + length <= data.length) {
        entries.set(name, data.subarray(indexEnd + offset, indexEnd + offset + length));
      }
    }
  } catch {
    entries.clear(); // unreadable or not ours: compiled afresh, and written again at exit
  }
  return entries;
}

function touch(file: string, nowMs: number): void {
  try {
    utimesSync(file, nowMs / 1000, nowMs / 1000);
  } catch {
    // A file whose time cannot be set is still read; at worst it is pruned early and written again.
  }
}

function writeCacheFile(file: string, kept: Map<string, Buffer>, fresh: Map<string, vm.Script>): void {
  try {
    const folder = dirname(file);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    if (!ownFolder(folder)) return;
    const parts = new Map(kept);
    for (const [name, script] of fresh) parts.set(name, script.createCachedData());
    const index: Record<string, [number, number]> = {};
    let offset = 0;
    for (const [name, part] of parts) {
      index[name] = [offset, part.length];
      offset += part.length;
    }
    const header = Buffer.from(JSON.stringify(index));
    const length = Buffer.alloc(4);
    length.writeUInt32LE(header.length);
    const temp = `${file}.${process.pid}.tmp`;
    const fd = openSync(temp, 'w', 0o600);
    try {
      for (const chunk of [length, header, ...parts.values()]) writeFileSync(fd, chunk);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
    pruneCacheFolder(folder, basename(file));
  } catch {
    // A cache that cannot be written is not kept: the next start compiles again.
  }
}

/**
 * Keeps the cache files of the KEPT_BUILDS builds (or Node versions) used last,
 * `current` among them, so that two runners or two Nodes used in turn do not
 * compile again each time; a temp file is another writer's unless it is old.
 */
function pruneCacheFolder(folder: string, current: string): void {
  const now = Date.now();
  const others: { path: string; mtimeMs: number }[] = [];
  for (const name of readdirSync(folder)) {
    if (name === current) continue;
    const path = join(folder, name);
    const mtimeMs = statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (name.endsWith('.tmp')) {
      if (now - mtimeMs > STALE_TEMP_MS) rmSync(path, { force: true });
    } else others.push({ path, mtimeMs });
  }
  others.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { path } of others.slice(KEPT_BUILDS - 1)) rmSync(path, { force: true });
}
