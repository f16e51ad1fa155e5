#!/usr/bin/env node
import { processIO } from './io.js';
import { runCli } from './program.js';

// The CLI sets process.exitCode and lets the event loop drain; it never calls process.exit on the normal path.
process.exitCode = await runCli(process.argv.slice(2), processIO());
