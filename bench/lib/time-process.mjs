// Times a `node` child process from spawn to exit, keeping its output, for
// the cases that measure a whole CLI command ((c), (f), (g)).
import { spawn } from 'node:child_process';

/** Spawns `node ARGS` in `cwd`; resolves with `{ ms, stdout }` (spawn to exit), rejects on a non-zero exit. */
export function timeNodeProcess(args, cwd) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve({ ms, stdout });
      else reject(new Error(`node ${args.join(' ')} exited ${code}:\n${stdout}${stderr}`));
    });
  });
}
