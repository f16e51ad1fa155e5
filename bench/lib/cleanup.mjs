// Cleanup that also runs when the bench is interrupted: a signal's default
// action ends the process without running 'exit' handlers or `finally`
// blocks, which left temp workspaces behind (on tmpfs they hold RAM).

/** Synchronous cleanups registered and not yet run. */
const pending = new Set();
let hooked = false;

/**
 * Runs `cleanup` (synchronous) when the process exits, unless the returned
 * function was called first; calling that function runs `cleanup` now.
 * Ctrl-C, SIGTERM and SIGHUP exit with the shell's code for the signal, so
 * the cleanups run; a second Ctrl-C ends the process at once.
 */
export function cleanUpAtExit(cleanup) {
  pending.add(cleanup);
  if (!hooked) {
    hooked = true;
    // Last registered, first run: processes started in a workspace stop before it is removed.
    process.on('exit', () => {
      for (const run of [...pending].reverse()) run();
    });
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) process.once(signal, () => process.exit(code));
  }
  return () => {
    if (pending.delete(cleanup)) cleanup();
  };
}
