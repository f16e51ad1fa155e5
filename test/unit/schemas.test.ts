import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { configSchema, renderSchemaFile } from '../../src/config/schema.js';
import { formatDiagnostic, RunnerError } from '../../src/errors.js';
import { loadWorkflow } from '../../src/workflow/load.js';
import { SCHEMA_FILES, workflowSchema } from '../../src/workflow/schema.js';
import { renderValidatorsModule } from '../../scripts/validators-code.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const workflowsDir = join(root, 'workflows');
const workflowFiles = existsSync(workflowsDir)
  ? readdirSync(workflowsDir)
      .filter((name) => /\.ya?ml$/.test(name))
      .sort()
  : [];

describe('generated editor schemas', () => {
  it.each(Object.entries(SCHEMA_FILES))('%s is what `npm run schemas` writes now', (path, schema) => {
    const checkedIn = readFileSync(join(root, path), 'utf8');
    // On failure: run `npm run schemas` and commit the result.
    expect(checkedIn).toBe(renderSchemaFile(schema));
  });

  it('src/config/compiled-schemas.ts (their validators) is what `npm run schemas` writes now', () => {
    const checkedIn = readFileSync(join(root, 'src', 'config', 'compiled-schemas.ts'), 'utf8');
    // On failure: run `npm run schemas` and commit the result.
    expect(checkedIn).toBe(renderValidatorsModule({ config: configSchema, workflow: workflowSchema }));
  });
});

describe('example workflows', () => {
  it('lists whatever workflows/ holds (possibly none)', () => {
    expect(Array.isArray(workflowFiles)).toBe(true);
  });

  it.each(workflowFiles)('workflows/%s validates against runner.config.yaml', async (name) => {
    // The repository's config when present (found from the repository root), else the defaults.
    const config = await loadConfig({ cwd: root, env: { ...process.env } });
    try {
      const workflow = await loadWorkflow(join(workflowsDir, name), config);
      expect(workflow.steps.length).toBeGreaterThan(0);
    } catch (error) {
      if (error instanceof RunnerError) throw new Error(error.diagnostics.map(formatDiagnostic).join('\n'), { cause: error });
      throw error;
    }
  });
});
