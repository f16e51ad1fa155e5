/** The signals that ask a long-running command to stop: Ctrl-C, a service manager, a closed terminal (left to its default, SIGHUP would kill the runner without closing its apps). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Calls `onSignal` with each stop signal and how many have come so far (1 for the first); returns what removes the handlers. */
export function onStopSignals(onSignal: (signal: NodeJS.Signals, count: number) => void): () => void {
  let count = 0;
  const handler = (signal: NodeJS.Signals) => onSignal(signal, ++count);
  for (const signal of STOP_SIGNALS) process.on(signal, handler);
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, handler);
  };
}
