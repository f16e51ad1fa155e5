// Entry of the demo apps' V8 startup snapshot (built by test/global-setup.ts): the SDK, zod and both
// apps' tools are loaded and evaluated once, when the snapshot is built; each `node --snapshot-blob
// BLOB examples/apps/<app>/server.js FLAGS` then starts from that heap and runs what server.js runs.
// The part of exceljs the sheet app loads on its first call is loaded here too, so it is in the heap
// (a start and first call 320-380 ms of CPU -> 180-230). sharp and the HTTP serving stay outside
// (test/global-setup.ts): the apps load them on first use, through a require that resolves from
// examples/apps/lib/ as their import() would.
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import v8 from 'node:v8';
import 'exceljs/lib/doc/workbook.js';
import { createImageServer } from '../../examples/apps/image/app.js';
import { runApp } from '../../examples/apps/lib/serve.js';
import { createSheetServer } from '../../examples/apps/sheet/app.js';

const APPS = { image: createImageServer, sheet: createSheetServer };

v8.startupSnapshot.setDeserializeMainFunction(() => {
  const script = process.argv[1];
  const name = basename(dirname(script));
  globalThis.__snapshotRequire = createRequire(join(dirname(script), '..', 'lib', 'serve.js'));
  runApp({ name, createServer: APPS[name] }).catch((error) => {
    process.stderr.write(`${name}: ${error?.stack ?? error}\n`);
    process.exit(1);
  });
});
