#!/usr/bin/env node
import { processIO, routeConsoleToStderr } from './io.js';
import { loadProgram } from './load-program.js';

// Before the program loads (loadProgram, below): a library that logs on import must not reach stdout.
routeConsoleToStderr();
const io = processIO();
const { runCli } = await loadProgram();

// The CLI sets process.exitCode and lets the event loop drain; it never calls process.exit on the normal path.
process.exitCode = await runCli(process.argv.slice(2), io);
