// Writes schemas/*.schema.json from the schemas in src/ (the one source of
// truth), for editors, and src/config/compiled-schemas.ts, their validators.
// Runs on the build output: `npm run schemas` builds first, and again after.
// test/unit/schemas.test.ts fails when the checked-in files drift.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configSchema, renderSchemaFile } from '../dist/config/schema.js';
import { SCHEMA_FILES, workflowSchema } from '../dist/workflow/schema.js';
import { renderValidatorsModule } from './validators-code.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const [path, schema] of Object.entries(SCHEMA_FILES)) {
  const file = join(root, path);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, renderSchemaFile(schema));
  console.log(`wrote ${path}`);
}
const validators = 'src/config/compiled-schemas.ts';
await writeFile(join(root, validators), renderValidatorsModule({ config: configSchema, workflow: workflowSchema }));
console.log(`wrote ${validators} (run \`npm run build\` again to use it)`);
