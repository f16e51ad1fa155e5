// Temp workspaces for the benchmarks: a folder with its own runner.config.yaml
// and generated workflow files, pointing at the faulty fixture app.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cleanUpAtExit } from './cleanup.mjs';
import { distDir } from './dist.mjs';
import { faultyApp } from './paths.mjs';

export { faultyApp };
export const cliPath = join(distDir, 'cli', 'main.js');
/** A RAM-backed folder, when the machine has one: artifacts there cost no disk I/O. */
export const tmpfsDir = existsSync('/dev/shm') ? '/dev/shm' : null;

/**
 * Creates a temp folder with a runner.config.yaml declaring one stdio app
 * `faulty` (modern era by default, `legacy: true` for --legacy-only). The
 * artifacts folder is inside it (on the temp disk), or with `tmpfs: true` in
 * a RAM-backed folder, to tell the disk's share of the runner's cost apart.
 */
export function createWorkspace({ concurrency = 32, legacy = false, tmpfs = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'runner-bench-'));
  const artifacts = tmpfs ? mkdtempSync(join(tmpfsDir, 'runner-bench-artifacts-')) : join(dir, 'artifacts');
  const args = legacy ? [faultyApp, '--legacy-only'] : [faultyApp];
  const config = [
    `artifacts: ${JSON.stringify(artifacts)}`,
    `concurrency: ${concurrency}`,
    'apps:',
    '  faulty:',
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: ${JSON.stringify(args)}`,
    'policy:',
    '  read-only: allow',
    '  other: allow',
    '  open-world: allow',
    '',
  ].join('\n');
  const write = (relative, text) => {
    const file = join(dir, relative);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  write('runner.config.yaml', config);
  // Retries: a process killed just before may still be finishing a write into the folder.
  const remove = cleanUpAtExit(() => {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    rmSync(artifacts, { recursive: true, force: true, maxRetries: 5 });
  });
  return { dir, artifacts, app: { command: process.execPath, args }, write, remove };
}

/** A workflow of `count` steps, each `needs` the one before through `steps.sN.outputs.text`. */
export function chainWorkflowYaml(name, count, delayMs) {
  const lines = [`name: ${name}`, 'steps:'];
  lines.push('  - id: s0', '    uses: faulty.echo', `    with: { text: "x", delayMs: ${delayMs} }`);
  for (let i = 1; i < count; i++) {
    lines.push(`  - id: s${i}`, '    uses: faulty.echo', `    with: { text: "\${{ steps.s${i - 1}.outputs.text }}", delayMs: ${delayMs} }`);
  }
  return `${lines.join('\n')}\n`;
}

/** One foreach step over `inputs.items`, `concurrency` of them in flight. */
export function foreachWorkflowYaml(name, concurrency, delayMs) {
  return [
    `name: ${name}`,
    `concurrency: ${concurrency}`,
    'inputs:',
    '  items: { type: array, default: [] }',
    'steps:',
    '  - id: fan',
    '    uses: faulty.echo',
    '    foreach: ${{ inputs.items }}',
    `    with: { text: "item \${{ item }}", delayMs: ${delayMs} }`,
    '',
  ].join('\n');
}

/** `count` steps with no needs between them, `concurrency` of them in flight. */
export function independentWorkflowYaml(name, count, concurrency, delayMs) {
  const lines = [`name: ${name}`, `concurrency: ${concurrency}`, 'steps:'];
  for (let i = 0; i < count; i++) {
    lines.push(`  - id: s${i}`, '    uses: faulty.echo', `    with: { text: "item ${i}", delayMs: ${delayMs} }`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A 10,000-step workflow that exercises validation: every step reads its
 * parent's output in a binary tree (`steps.s<(i-1)/2>`), every 10th step also
 * names the step before it in `needs`, every 25th has an `if`, and every
 * 100th is a foreach over its parent's output.
 */
export function largeWorkflowYaml(name, count) {
  const lines = [`name: ${name}`, 'inputs:', '  prefix: { type: string, default: p }', 'steps:'];
  lines.push('  - id: s0', '    uses: faulty.echo', '    with: { text: "${{ inputs.prefix }}" }');
  for (let i = 1; i < count; i++) {
    const parent = (i - 1) >> 1;
    lines.push(`  - id: s${i}`, '    uses: faulty.echo');
    if (i % 10 === 0) lines.push(`    needs: [s${i - 1}]`);
    if (i % 25 === 0) lines.push(`    if: \${{ steps.s${parent}.status == 'succeeded' }}`);
    if (i % 100 === 0) lines.push(`    foreach: \${{ steps.s${parent}.outputs.items }}`);
    lines.push(`    with: { text: "\${{ steps.s${parent}.outputs.text }}-${i}", delayMs: 0 }`);
  }
  return `${lines.join('\n')}\n`;
}
