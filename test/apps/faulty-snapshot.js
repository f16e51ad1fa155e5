// Entry of the faulty server's V8 startup snapshot (built by test/global-setup.ts): the SDK, zod and
// the tools are loaded and evaluated once, when the snapshot is built; each `node --snapshot-blob
// BLOB faulty.js FLAGS` then starts from that heap and runs main(), as `node faulty.js FLAGS` does.
import v8 from 'node:v8';
import { main } from './faulty-main.js';

v8.startupSnapshot.setDeserializeMainFunction(() => {
  main().catch((error) => {
    process.stderr.write(`faulty: ${error?.stack ?? error}\n`);
    process.exit(1);
  });
});
