import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/workspace.js';

// What `npm pack` puts in the package (docs/getting-started.md): what a project uses, nothing of the
// repository's own development. --ignore-scripts: `prepare` would build, and the suite has built.

interface PackedFile {
  path: string;
}

async function packedPaths(): Promise<string[]> {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
  const [pack] = JSON.parse(stdout) as [{ files: PackedFile[] }];
  return pack.files.map((file) => file.path);
}

describe('the npm package', () => {
  it('holds the built CLI, the schemas, the docs and the demo apps, and no sources, tests or benchmarks', async () => {
    const paths = await packedPaths();
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { bin: Record<string, string>; main: string; types: string };
    const bundle = readdirSync(join(repoRoot, 'dist', 'cli', 'bundle')).map((name) => `dist/cli/bundle/${name}`);
    const docs = readdirSync(join(repoRoot, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        ...Object.values(manifest.bin),
        manifest.main,
        manifest.types,
        ...bundle,
        'schemas/config.schema.json',
        'schemas/workflow.schema.json',
        ...docs,
        'examples/apps/image/server.js',
      ]),
    );
    const development = paths.filter((path) => /^(src|test|bench|lint|scripts|conformance|\.ci)\//.test(path) || path.startsWith('tsconfig') || path === 'vitest.config.ts');
    expect(development).toEqual([]);
  });
});
