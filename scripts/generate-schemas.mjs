// Writes schemas/*.schema.json from the schemas in src/ (the one source of
// truth), for editors. Runs on the build output: `npm run schemas` builds
// first. test/unit/schemas.test.ts fails when the checked-in files drift.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderSchemaFile } from '../dist/config/schema.js';
import { SCHEMA_FILES } from '../dist/workflow/schema.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const [path, schema] of Object.entries(SCHEMA_FILES)) {
  const file = join(root, path);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, renderSchemaFile(schema));
  console.log(`wrote ${path}`);
}
