#!/usr/bin/env node
// Bundles the CLI after tsc (`npm run build` runs both): dist/cli/program.js and what it imports,
// the packages included, into dist/cli/bundle/ (CommonJS), with bundle.json naming the build.
// dist/cli/main.js loads it through src/cli/load-program.ts, which falls back to the modules tsc
// wrote when there is no bundle or tsc has built since (dist/.tsbuildinfo is newer).
//
// Why: a one-step `runner run` loads some 300 ES modules, and Node's per-module cost (resolving,
// reading, linking) was about a fifth of its start-up. The bundle is the same code in far fewer files.
//
// What stays outside: Node's own modules, and native addons and what loads them (better-sqlite3).
// The queue's packages (bullmq, ioredis) are bundled too, into the chunks only queue mode imports:
// as some 300 CommonJS files a `runner worker` spent about 0.5 s of CPU before it was ready, as
// chunks about 0.27 s. Their optional backends (pg, valkey-glide) stay lazy `require`s, as in the
// package. The Redis run store's thread loads ioredis from node_modules itself. Every other file of dist/
// stays where tsc wrote it: the in-process tests and the programmatic API (dist/index.js) import
// those, and the worker threads and the orphan reaper run from them.
//
// Why CommonJS: Node 20 can reuse V8's compiled code only for scripts (vm.Script's cachedData),
// not for ES modules, and load-program.ts keeps that code between starts (a one-step run then
// costs about a quarter less CPU). rolldown turns the ES modules into CommonJS chunks, and each
// dynamic import() of a chunk into a lazy require, so what a command does not use is still not loaded.
//
// A module that uses `import.meta.url` (worker and reaper paths, createRequire) gets the URL of the
// file it was bundled from, so every path it makes is the same as unbundled.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli');
const outDir = join(cli, 'bundle');

rmSync(outDir, { recursive: true, force: true });
await build({
  input: { program: join(cli, 'program.js') },
  platform: 'node',
  external: [/^node:/, 'better-sqlite3'],
  // jsonc-parser's `main` is a UMD build that requires its own files through a `require` it is
  // handed, which no bundler can follow: in the bundle it looked for them beside the chunk and a
  // config that imports a JSONC file (.vscode/mcp.json) failed. Its ES module build has none of that.
  resolve: { alias: { 'jsonc-parser': join(root, 'node_modules', 'jsonc-parser', 'lib', 'esm', 'main.js') } },
  plugins: [
    {
      name: 'module-urls-as-unbundled',
      transform(code, id) {
        if (!code.includes('import.meta.url')) return null;
        // Every chunk is in outDir, so the module's own file is this path from the chunk's __dirname.
        const path = relative(outDir, id).split(sep).join('/');
        const url = `__runnerPathToFileURL(__dirname + ${JSON.stringify(`/${path}`)}).href`;
        return { code: `import { pathToFileURL as __runnerPathToFileURL } from 'node:url';\n${code.replaceAll('import.meta.url', url)}`, map: null };
      },
    },
  ],
  output: {
    dir: outDir,
    format: 'cjs',
    entryFileNames: '[name].cjs',
    chunkFileNames: 'chunk-[hash].cjs',
    sourcemap: false,
    // ASCII only, so that V8 holds each chunk's source as a one-byte string: one non-ASCII character
    // anywhere (a `…` in a string, an `—` in a JSDoc comment) made the whole 2 MB chunk a two-byte
    // string, decoded from UTF-8 and copied at twice the size. Non-ASCII characters in code become
    // \u escapes, and comments other than licences are left out (they cannot be escaped; nothing reads them).
    // `runner validate`: 8,870 → 7,100 page faults, about a tenth less CPU (bench/README.md).
    charset: 'ascii',
    comments: { legal: true, annotation: false, jsdoc: false },
  },
  logLevel: 'warn',
});

// The build's id: a hash of every file of the bundle. Compiled code kept for one build is never used for another.
const hash = createHash('sha256');
for (const name of readdirSync(outDir).sort()) hash.update(name).update('\0').update(readFileSync(join(outDir, name)));
writeFileSync(join(outDir, 'bundle.json'), `${JSON.stringify({ id: hash.digest('hex').slice(0, 16), entry: 'program.cjs' })}\n`);
