#!/usr/bin/env node
import module from 'node:module';
import { processIO, routeConsoleToStderr } from './io.js';
import { loadProgram } from './load-program.js';

// Node 22.1 and later keep the compiled code of the modules below on disk (in the system's temp
// folder, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off) and reuse it while
// their files are unchanged: a command then starts without compiling the bundle again (on Node 22,
// a one-step run took 146–172 ms instead of 184–202 ms, ten runs each). On older Nodes loadProgram
// keeps the bundle's compiled code itself.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// Before the program loads (loadProgram, below): a library that logs on import must not reach stdout.
routeConsoleToStderr();
const io = processIO();
const { runCli } = await loadProgram();

// The CLI sets process.exitCode and lets the event loop drain; it never calls process.exit on the normal path.
process.exitCode = await runCli(process.argv.slice(2), io);
