// Entry of the shifting server's V8 startup snapshot (built by test/global-setup.ts), as
// faulty-snapshot.js is for the faulty server.
import v8 from 'node:v8';
import { main } from './shifting-main.js';

v8.startupSnapshot.setDeserializeMainFunction(() => {
  main().catch((error) => {
    process.stderr.write(`shifting: ${error?.stack ?? error}\n`);
    process.exit(1);
  });
});
