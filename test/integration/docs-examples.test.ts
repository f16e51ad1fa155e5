import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml, parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkRunnerCommands,
  extractBlocks,
  findLinks,
  findMissingLines,
  headingAnchors,
  parseHelp,
  proseOf,
  type CommandHelp,
  type DocBlock,
} from '../helpers/doc-blocks.js';
import { cliPath, everythingApp, repoRoot } from '../helpers/workspace.js';

// Every fenced code block in README.md and docs/*.md is checked: workflows
// validated (a few run), configs loaded, shell commands checked against the
// CLI's help (a few run), output samples matched against what ran. The
// convention is documented in docs/development.md; a block it does not cover
// fails, so new docs cannot slip through untested.

const DOC_FILES = ['README.md', ...readdirSync(join(repoRoot, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
const docs = DOC_FILES.map((file) => ({ file, text: readFileSync(join(repoRoot, file), 'utf8') }));
/** Other Markdown a user reads (the demo apps', the benchmarks'): its links and references are checked too. */
const OTHER_FILES = ['examples', 'bench'].flatMap((folder) =>
  readdirSync(join(repoRoot, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md') && !name.includes('node_modules'))
    .map((name) => `${folder}/${name}`),
);
const readable = [...docs, ...OTHER_FILES.map((file) => ({ file, text: readFileSync(join(repoRoot, file), 'utf8') }))];
const blocks = docs.flatMap(({ file, text }) => extractBlocks(text, file));

/** What each kind of block may carry in its info string after the language. */
const KINDS: Record<string, { words: string[]; attrs: string[] }[]> = {
  yaml: [
    { words: ['workflow'], attrs: ['file', 'matches', 'run'] },
    { words: ['workflow', 'run'], attrs: ['file'] },
    { words: ['workflow', 'invalid'], attrs: ['file'] },
    { words: ['steps'], attrs: [] },
    { words: ['config'], attrs: ['file', 'env', 'matches'] },
    { words: ['fragment'], attrs: [] },
  ],
  json: [{ words: [], attrs: ['file'] }],
  js: [{ words: ['module'], attrs: [] }],
  sh: [
    { words: [], attrs: ['file'] },
    { words: ['run'], attrs: [] },
  ],
  text: [
    { words: ['output'], attrs: [] },
    { words: ['sample'], attrs: [] },
  ],
};

/** The block's kind (`yaml workflow`, `sh run`), or undefined when the convention does not cover it. */
function kindOf(block: DocBlock): string | undefined {
  const lang = block.lang === 'bash' || block.lang === 'shell' ? 'sh' : block.lang;
  const fits = (KINDS[lang] ?? []).find(
    (kind) => kind.words.join(' ') === block.words.join(' ') && Object.keys(block.attrs).every((attr) => kind.attrs.includes(attr)),
  );
  if (!fits) return undefined;
  if (lang === 'yaml' && block.words[0] === 'workflow' && block.attrs.run !== undefined && block.attrs.run !== 'failed') return undefined;
  return [lang, ...block.words].join(' ');
}

const idOf = (block: DocBlock) => `${block.file}:${block.line}`;
const slugOf = (block: DocBlock) => `${block.file.replace(/^docs\//, '').replace(/\.md$/, '').toLowerCase()}-${block.line}`;

/** The problems found in each block, by `file:line`; a block that was checked has an entry. */
const problemsOf = new Map<string, string[]>();
const fail = (block: DocBlock, problem: string) => problemsOf.set(idOf(block), [...(problemsOf.get(idOf(block)) ?? []), problem]);

let help: Map<string, CommandHelp>;
let childEnv: NodeJS.ProcessEnv;
let exported: Set<string>;
let loadConfig: (options: { configPath: string; cwd: string; env: NodeJS.ProcessEnv }) => Promise<{ warnings: unknown[] }>;

/** Every temp folder the test made, removed at the end. */
const temporary: string[] = [];
const makeTemp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temporary.push(dir);
  return dir;
};

/** Runs a program to completion, never rejecting. */
function execute(command: string, args: string[], cwd: string, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolvePromise({ code: null, stdout, stderr: `${stderr}${error.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

const runner = (args: string[], cwd: string) => execute(process.execPath, [cliPath, ...args], cwd);

/** A module of the built package (dist/), which is what users run. */
const importBuilt = (path: string) => import(pathToFileURL(join(repoRoot, 'dist', path)).href) as Promise<Record<string, unknown>>;

/** `runner` and `npx` on PATH: the built CLI, and the pinned reference server of `runner init` from node_modules (never a download). */
function createShims(): string {
  const dir = makeTemp('runner-docs-bin-');
  const node = JSON.stringify(process.execPath);
  writeFileSync(join(dir, 'runner'), `#!/bin/sh\nexec ${node} ${JSON.stringify(cliPath)} "$@"\n`);
  writeFileSync(
    join(dir, 'npx'),
    [
      '#!/bin/sh',
      `if [ "$1" = runner ]; then shift; exec ${node} ${JSON.stringify(cliPath)} "$@"; fi`,
      `if [ "$1" = -y ] && [ "\${2#@modelcontextprotocol/server-everything@}" != "$2" ]; then shift 2; exec ${node} ${JSON.stringify(everythingApp)} "$@"; fi`,
      'echo "docs test: npx $* is not available here" >&2; exit 127',
      '',
    ].join('\n'),
  );
  chmodSync(join(dir, 'runner'), 0o755);
  chmodSync(join(dir, 'npx'), 0o755);
  return dir;
}

/** A page's workspace: a copy of the repository's config and workflows with the demo apps, or an empty folder. */
function createWorkspace(markdown: string): string {
  const dir = makeTemp('runner-docs-');
  if (/^<!-- docs-test: workspace=new-project -->/m.test(markdown)) return dir;
  cpSync(join(repoRoot, 'runner.config.yaml'), join(dir, 'runner.config.yaml'));
  cpSync(join(repoRoot, 'workflows'), join(dir, 'workflows'), { recursive: true });
  symlinkSync(join(repoRoot, 'examples'), join(dir, 'examples'));
  symlinkSync(join(repoRoot, 'schemas'), join(dir, 'schemas'));
  return dir;
}

/** Reads every command's `--help` from the built CLI, in process. */
async function readHelp(): Promise<Map<string, CommandHelp>> {
  const runCli = (await importBuilt('cli/program.js')).runCli as (argv: string[], io: object) => Promise<number>;
  const helpOf = async (argv: string[]) => {
    let text = '';
    const io = { stdout: (chunk: string) => (text += chunk), stderr: () => undefined, stdin: process.stdin, stderrIsTTY: false, cwd: repoRoot, env: {} };
    await runCli([...argv, '--help'], io);
    return parseHelp(text);
  };
  const map = new Map<string, CommandHelp>([['', await helpOf([])]]);
  for (const command of map.get('')!.subcommands) {
    const own = await helpOf([command]);
    map.set(command, own);
    for (const sub of own.subcommands) map.set(`${command} ${sub}`, await helpOf([command, sub]));
  }
  return map;
}

/**
 * Validates every `yaml workflow` and `yaml steps` block in one `runner
 * validate --online` call (tools and literal arguments checked against the
 * live apps), against the repository's config plus the `everything` app of
 * `runner init`. Resolves with the problems of each block.
 */
async function validateAll(): Promise<Map<string, string[]>> {
  const dir = makeTemp('runner-docs-validate-');
  const config = parseDocument(readFileSync(join(repoRoot, 'runner.config.yaml'), 'utf8'));
  config.setIn(['apps', 'everything'], { command: process.execPath, args: [everythingApp, 'stdio'] });
  writeFileSync(join(dir, 'runner.config.yaml'), config.toString());
  symlinkSync(join(repoRoot, 'examples'), join(dir, 'examples'));
  const files = new Map<string, DocBlock>();
  for (const block of blocks) {
    const kind = kindOf(block);
    if (kind !== 'yaml workflow' && kind !== 'yaml workflow run' && kind !== 'yaml steps') continue;
    const name = block.attrs.file ? block.attrs.file.split('/').pop()! : `${slugOf(block)}.yaml`;
    const text = kind === 'yaml steps' ? `name: ${slugOf(block)}\nsteps:\n${block.body.replace(/^(?=.)/gm, '  ')}` : block.body;
    const file = join(dir, slugOf(block), name);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    files.set(file, block);
  }
  const result = await runner(['validate', '--online', ...files.keys()], dir);
  // A diagnostic starts on a line without indentation; its hints follow, indented.
  const diagnostics: string[] = [];
  for (const line of result.stderr.split('\n')) {
    if (/^\s/.test(line) && diagnostics.length > 0) diagnostics[diagnostics.length - 1] += `\n${line}`;
    else if (line !== '') diagnostics.push(line);
  }
  const problems = new Map<string, string[]>();
  for (const [file, block] of files) {
    // Shown absolute, or relative to the folder validate ran in.
    const mentions = (text: string) => text.includes(file) || text.includes(relative(dir, file));
    const own = diagnostics.filter(mentions).map((diagnostic) => diagnostic.replaceAll(`${dirname(file)}/`, ''));
    if (own.length === 0 && !mentions(result.stdout)) own.push(`runner validate said nothing about it (exit ${result.code}):\n${result.stderr}`);
    problems.set(idOf(block), own);
  }
  return problems;
}

/** Writes a block's text to `relativePath` in the workspace. */
function writeInto(workspace: string, relativePath: string, text: string): string {
  const file = resolve(workspace, relativePath);
  if (relative(workspace, file).startsWith('..')) throw new Error(`file=${relativePath} leaves the workspace`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** A command's output as the docs show it: paths inside the workspace relative to it. */
const normalize = (text: string, workspace: string) => text.replaceAll(`${realpathSync(workspace)}/`, '').replaceAll(`${workspace}/`, '');

/** Checks one page's blocks in order, in the page's workspace (workflows are validated apart, see validateAll). */
async function checkPage(page: { file: string; text: string }): Promise<void> {
  const workspace = createWorkspace(page.text);
  let lastOutput: { from: string; text: string } | undefined;
  for (const block of blocks.filter((candidate) => candidate.file === page.file)) {
    const kind = kindOf(block);
    if (!kind) {
      fail(block, `\`\`\`${block.info}: not a kind of block the docs test knows (see "The docs are tested" in docs/development.md)`);
      continue;
    }
    try {
      if (block.attrs.matches !== undefined) {
        const path = join(workspace, block.attrs.matches);
        const actual = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
        if (actual !== block.body) fail(block, actual === undefined ? `${block.attrs.matches} does not exist` : `differs from ${block.attrs.matches}:\n${actual}`);
      }
      switch (kind) {
        case 'yaml workflow':
        case 'yaml workflow run':
        case 'yaml steps': {
          const path = block.attrs.file ?? `${slugOf(block)}.yaml`;
          if (block.attrs.file !== undefined || kind === 'yaml workflow run' || block.attrs.run) writeInto(workspace, path, block.body);
          const expected = kind === 'yaml workflow run' ? 'succeeded' : block.attrs.run;
          if (expected) {
            const result = await runner(['run', path, '--json'], workspace);
            lastOutput = { from: idOf(block), text: normalize(`${result.stderr}\n${result.stdout}`, workspace) };
            const status = (() => {
              try {
                return (JSON.parse(result.stdout) as { status: string }).status;
              } catch {
                return `no run record (exit ${result.code})`;
              }
            })();
            if (status !== expected || result.code !== (expected === 'succeeded' ? 0 : 1)) {
              fail(block, `runner run: expected a ${expected} run, got ${status} (exit ${result.code}):\n${result.stderr}`);
            }
          }
          break;
        }
        case 'yaml workflow invalid': {
          const path = writeInto(workspace, block.attrs.file ?? `${slugOf(block)}.yaml`, block.body);
          const result = await runner(['validate', path], workspace);
          lastOutput = { from: idOf(block), text: normalize(result.stderr, workspace) };
          if (result.code !== 2) fail(block, `runner validate: expected exit 2, got ${result.code}:\n${result.stdout}${result.stderr}`);
          break;
        }
        case 'yaml config': {
          const path = writeInto(workspace, block.attrs.file ?? `${slugOf(block)}.config.yaml`, block.body);
          const env: NodeJS.ProcessEnv = { ...childEnv };
          for (const name of block.attrs.env?.split(',') ?? []) env[name] = 'docs-test-value';
          try {
            const config = await loadConfig({ configPath: path, cwd: workspace, env });
            if (config.warnings.length > 0) fail(block, `the config loads with warnings: ${JSON.stringify(config.warnings)}`);
          } catch (error) {
            const diagnostics = (error as { diagnostics?: { message: string }[] }).diagnostics ?? [];
            fail(block, `the config does not load: ${(error as Error).message}${diagnostics.map((d) => `\n  ${d.message}`).join('')}`);
          }
          break;
        }
        case 'yaml fragment':
          parseYaml(block.body);
          break;
        case 'json':
          JSON.parse(block.body);
          if (block.attrs.file !== undefined) writeInto(workspace, block.attrs.file, block.body);
          break;
        case 'js module':
          await checkModule(block);
          break;
        case 'sh':
        case 'sh run': {
          const syntax = (await shellSyntax).get(idOf(block));
          if (syntax !== undefined) fail(block, `bash -n: ${syntax}`);
          for (const problem of checkRunnerCommands(block.body, help)) fail(block, problem);
          if (block.attrs.file !== undefined) writeInto(workspace, block.attrs.file, block.body);
          if (kind === 'sh run') {
            const result = await execute('bash', ['-e', '-o', 'pipefail', '-c', block.body], workspace);
            lastOutput = { from: idOf(block), text: normalize(`${result.stdout}\n${result.stderr}`, workspace) };
            if (result.code !== 0) fail(block, `exit ${result.code}:\n${result.stdout}${result.stderr}`);
          }
          break;
        }
        case 'text output': {
          if (!lastOutput) {
            fail(block, 'an output block needs a block before it that ran (`sh run`, `yaml workflow run`, `yaml workflow invalid`)');
            break;
          }
          const missing = findMissingLines(block.body, lastOutput.text);
          if (missing.length > 0) fail(block, `not in the output of ${lastOutput.from}:\n${missing.join('\n')}\n--- the output was:\n${lastOutput.text}`);
          break;
        }
        case 'text sample':
          break;
      }
    } catch (error) {
      fail(block, error instanceof Error ? error.message : String(error));
    }
    if (!problemsOf.has(idOf(block))) problemsOf.set(idOf(block), []);
  }
}

/** A `js module` block parses as an ES module, and what it imports from 'runner' is exported. */
async function checkModule(block: DocBlock): Promise<void> {
  const dir = makeTemp('runner-docs-js-');
  writeFileSync(join(dir, 'example.mjs'), block.body);
  const syntax = await execute(process.execPath, ['--check', 'example.mjs'], dir);
  if (syntax.code !== 0) fail(block, `node --check: ${syntax.stderr}`);
  for (const match of block.body.matchAll(/import\s*\{([^}]*)\}\s*from\s*'runner'/g)) {
    for (const name of match[1]!.split(',').map((part) => part.trim().split(/\s+as\s+/)[0]!).filter(Boolean)) {
      if (!exported.has(name)) fail(block, `\`${name}\` is not exported by the runner package`);
    }
  }
}

/** `bash -n`'s complaint about each shell block that does not parse, by `file:line`. */
let shellSyntax: Promise<Map<string, string>>;

/**
 * Parses every shell block with `bash -n`, all from one bash process: each child this worker
 * starts is a fork of its memory, which grows to hundreds of MB over a suite, so one fork here
 * instead of one per block (bash's own forks are cheap).
 */
async function checkShellSyntax(): Promise<Map<string, string>> {
  const dir = makeTemp('runner-docs-sh-');
  const shell = blocks.filter((block) => ['sh', 'sh run'].includes(kindOf(block) ?? ''));
  const names = shell.map((block, index) => {
    const name = `block-${index}.sh`;
    writeFileSync(join(dir, name), block.body);
    return name;
  });
  const loop = `for f in "$@"; do if ! out=$(bash -n "$f" 2>&1); then printf '%s\\0%s\\0' "$f" "$out"; fi; done`;
  const result = await execute('bash', ['-c', loop, 'bash', ...names], dir);
  if (result.code !== 0) throw new Error(`bash -n of the docs' shell blocks: exit ${result.code}: ${result.stderr}`);
  const complaints = new Map<string, string>();
  const fields = result.stdout.split('\0');
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const block = shell[names.indexOf(fields[index]!)];
    if (block) complaints.set(idOf(block), fields[index + 1]!);
  }
  return complaints;
}

beforeAll(async () => {
  childEnv = { ...process.env, PATH: `${createShims()}:${process.env.PATH ?? ''}` };
  help = await readHelp();
  exported = new Set(Object.keys(await importBuilt('index.js')));
  loadConfig = (await importBuilt('config/load.js')).loadConfig as typeof loadConfig;
  shellSyntax = checkShellSyntax();
  // Pages run side by side, each in order; the one validation of all their workflows runs beside them.
  const [validated] = await Promise.all([validateAll(), ...docs.map((page) => checkPage(page))]);
  for (const block of blocks) for (const problem of validated.get(idOf(block)) ?? []) fail(block, problem);
}, 180_000);

afterAll(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

describe('every code block in the docs', () => {
  for (const block of blocks) {
    it(`${idOf(block)} \`\`\`${block.info}`, () => {
      const problems = problemsOf.get(idOf(block));
      expect(problems, 'the block was not checked').toBeDefined();
      expect(problems!.join('\n\n')).toBe('');
    });
  }
});

describe('links and references in the docs', () => {
  for (const { file, text } of readable) {
    it(`${file}: relative links point at files and headings that exist`, () => {
      const broken: string[] = [];
      for (const { target, line } of findLinks(proseOf(text))) {
        if (/^[a-z]+:/i.test(target)) {
          if (!/^https?:/.test(target)) broken.push(`${line}: ${target}: only http(s) links may leave the repository`);
          continue;
        }
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? join(repoRoot, file) : resolve(repoRoot, dirname(file), path);
        if (path.startsWith('/') || relative(repoRoot, resolved).startsWith('..')) {
          broken.push(`${line}: ${target}: points outside the repository`);
        } else if (!existsSync(resolved)) {
          broken.push(`${line}: ${target}: no such file`);
        } else if (anchor !== undefined && resolved.endsWith('.md') && !headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`${line}: ${target}: no heading with that anchor`);
        }
      }
      expect(broken).toEqual([]);
    });

    it(`${file}: names no file outside the repository`, () => {
      expect(text).not.toMatch(/DESIGN\.md|STYLE\.md|\/work\/shared/i);
    });
  }
});
