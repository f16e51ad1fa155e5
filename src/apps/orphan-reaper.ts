import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readProcessStart } from '../process-info.js';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

const REAPER_MAIN = fileURLToPath(new URL('./reaper-main.js', import.meta.url));

/** The `track` line of each app process group the reaper must know about, by leader pid. */
const trackLines = new Map<number, string>();
let reaper: ChildProcess | null = null;
let unavailable = process.platform === 'win32';

/**
 * Tells the orphan reaper (reaper-main.ts) about an app's process group, starting
 * the reaper on the first call. Apps run in their own process group, so a
 * runner killed with SIGKILL, which runs no cleanup, would leave them running
 * for good; the reaper outlives the runner and kills them. Costs one
 * /proc read and one pipe write per app spawn, nothing per call.
 */
export function rememberGroup(pid: number): void {
  const line = `track ${pid} ${readProcessStart(pid) ?? '-'}\n`;
  trackLines.set(pid, line);
  if (reaper) send(line);
  else startReaper();
}

/** Tells the reaper a group is closed, so its pid is never signalled again. */
export function forgetGroup(pid: number): void {
  if (!trackLines.delete(pid)) return;
  send(`untrack ${pid}\n`);
}

function startReaper(): void {
  // Run from TypeScript sources (unit tests), there is no compiled reaper to start.
  if (unavailable || !existsSync(REAPER_MAIN)) {
    unavailable = true;
    return;
  }
  // Detached: its own session, so a terminal's Ctrl-C or hang-up does not end
  // it before the runner. stdin is the lifeline: it reaches EOF when the
  // runner exits, however it exits. The pipe is close-on-exec, so apps do not
  // inherit it and hold it open. It needs nothing of the runner's environment; NODE_EXTRA_CA_CERTS, say,
  // would cost it 40 ms of CPU at start parsing certificates it never uses.
  const child = spawn(process.execPath, [REAPER_MAIN], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: {} });
  reaper = child;
  const lost = () => {
    // Killed by someone else: the next app spawn starts a new one and tells it every live group.
    if (reaper === child) reaper = null;
  };
  child.on('error', lost);
  child.on('exit', lost);
  child.stdin?.on('error', lost);
  // Neither the reaper nor its pipe may keep the runner's event loop alive.
  child.unref();
  (child.stdin as Socket | null)?.unref();
  send([...trackLines.values()].join(''));
}

function send(text: string): void {
  if (text.length > 0) reaper?.stdin?.write(text);
}
