#!/usr/bin/env node
// Bundles the CLI after tsc (`npm run build` runs both): dist/cli/program.js and what it imports,
// the packages included, into dist/cli/bundle/, and points dist/cli/main.js at it.
//
// Why: a one-step `runner run` loads some 300 ES modules, and Node's per-module cost (resolving,
// reading, linking) was about a fifth of its start-up. The bundle is the same code in far fewer files.
// Dynamic imports stay separate chunks, so what a command does not use is still not loaded.
//
// What stays outside: Node's own modules, and native addons and what loads them (better-sqlite3).
// The queue's packages (bullmq, ioredis) are bundled too, into the chunks only queue mode imports:
// as some 300 CommonJS files a `runner worker` spent about 0.5 s of CPU before it was ready, as
// chunks about 0.27 s. Their optional backends (pg, valkey-glide) stay lazy `require`s, as in the
// package. The Redis run store's thread loads ioredis from node_modules itself. Every other file of dist/
// stays where tsc wrote it: the in-process tests and the programmatic API (dist/index.js) import
// those, and the worker threads and the orphan reaper run from them.
//
// A module that uses `import.meta.url` (worker and reaper paths, createRequire) gets the URL of the
// file it was bundled from, so every path it makes is the same as unbundled.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli');
const outDir = join(cli, 'bundle');
const main = join(cli, 'main.js');
const UNBUNDLED = './program.js';
const BUNDLED = './bundle/program.js';

rmSync(outDir, { recursive: true, force: true });
await build({
  input: { program: join(cli, 'program.js') },
  platform: 'node',
  external: [/^node:/, 'better-sqlite3'],
  plugins: [
    {
      name: 'module-urls-as-unbundled',
      transform(code, id) {
        if (!code.includes('import.meta.url')) return null;
        const path = relative(outDir, id).split(sep).join('/');
        return { code: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(path)}, import.meta.url).href`), map: null };
      },
    },
  ],
  output: { dir: outDir, format: 'esm', entryFileNames: '[name].js', chunkFileNames: 'chunk-[hash].js', sourcemap: false },
  logLevel: 'warn',
});

// tsc builds incrementally (tsconfig.json): it leaves main.js as the last build made it unless
// src/cli/main.ts changed, so main.js may point at the bundle already.
const text = readFileSync(main, 'utf8');
if (!text.includes(`import('${BUNDLED}')`)) {
  if (!text.includes(`import('${UNBUNDLED}')`)) throw new Error(`${main} does not import ${UNBUNDLED}: run tsc first (npm run build)`);
  writeFileSync(main, text.replace(`import('${UNBUNDLED}')`, `import('${BUNDLED}')`));
}
