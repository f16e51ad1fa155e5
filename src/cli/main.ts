#!/usr/bin/env node
import { processIO, routeConsoleToStderr } from './io.js';

// Before any other module loads (hence the dynamic import below): a library that logs on import must not reach stdout.
routeConsoleToStderr();
const io = processIO();
const { runCli } = await import('./program.js');

// The CLI sets process.exitCode and lets the event loop drain; it never calls process.exit on the normal path.
process.exitCode = await runCli(process.argv.slice(2), io);
