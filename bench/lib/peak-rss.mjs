// Times a `node` child process from spawn to exit and measures its peak RSS:
// the kernel's high-water mark (`VmHWM` in /proc/<pid>/status) of that one
// process, polled every 20 ms while it runs, keeping the largest reading.
// Only the process itself counts, not the apps it spawns (GNU time's %M would
// report the largest of all waited-for descendants instead). VmHWM only ever
// grows, so a poll misses nothing but what the last <20 ms before exit add.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const POLL_MS = 20;
/** How much of each output stream to keep (its end): enough for an error message. */
const KEEP_CHARS = 64 * 1024;

/** The process's VmHWM in bytes, or null once it is gone (or has become a zombie). */
function readHighWaterMark(pid) {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Spawns `node ARGS` in `cwd` and resolves with `{ ms, peakRssBytes, code,
 * stdout, stderr }` (the ends of the outputs) whatever the exit code.
 * `peakRssBytes` is null where /proc is not available.
 */
export function measureNodeProcess(args, { cwd, env = process.env } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const keep = (text, chunk) => {
      const next = text + chunk;
      return next.length > KEEP_CHARS ? next.slice(-KEEP_CHARS) : next;
    };
    child.stdout.on('data', (chunk) => (stdout = keep(stdout, chunk)));
    child.stderr.on('data', (chunk) => (stderr = keep(stderr, chunk)));
    let peakRssBytes = null;
    const poll = () => {
      const hwm = readHighWaterMark(child.pid);
      if (hwm !== null && (peakRssBytes === null || hwm > peakRssBytes)) peakRssBytes = hwm;
    };
    const timer = setInterval(poll, POLL_MS);
    child.on('error', (error) => {
      clearInterval(timer);
      reject(error);
    });
    let ms;
    child.on('exit', () => {
      ms = performance.now() - started;
      clearInterval(timer);
    });
    // Resolved on 'close' (its outputs read to the end), timed at 'exit'.
    child.on('close', (code, signal) => resolve({ ms: ms ?? performance.now() - started, peakRssBytes, code: code ?? signal, stdout, stderr }));
  });
}
