import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readProcessStart } from '../process-info.js';
import { REAPER_SCRIPT } from './reaper-script.js';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

const REAPER_MAIN = fileURLToPath(new URL('./reaper-main.js', import.meta.url));
/** The shell the reaper runs in (reaper-script.ts); where there is none, the same reaper runs in Node (reaper-main.ts). */
const SHELL = '/bin/sh';

/** The `track` line of each app process group the reaper must know about, by leader pid. */
const trackLines = new Map<number, string>();
let reaper: ChildProcess | null = null;
let unavailable = process.platform === 'win32';

/**
 * Tells the orphan reaper (reaper-script.ts) about an app's process group, starting
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

/** How to start the reaper: a shell script (about 2 ms of CPU), or Node (about 70 ms) where there is no shell. */
function reaperCommand(): [command: string, args: string[]] | undefined {
  if (existsSync(SHELL)) return [SHELL, ['-c', REAPER_SCRIPT, 'runner-reaper']];
  // Run from TypeScript sources (unit tests), there is no compiled reaper-main.js either.
  return existsSync(REAPER_MAIN) ? [process.execPath, [REAPER_MAIN]] : undefined;
}

function startReaper(): void {
  const command = unavailable ? undefined : reaperCommand();
  if (!command) {
    unavailable = true;
    return;
  }
  // Detached: its own session, so a terminal's Ctrl-C or hang-up does not end
  // it before the runner. stdin is the lifeline: it reaches EOF when the
  // runner exits, however it exits. The pipe is close-on-exec, so apps do not
  // inherit it and hold it open. Of the runner's environment it needs only PATH (the script's `sleep`);
  // NODE_EXTRA_CA_CERTS, say, would cost the Node reaper 40 ms of CPU at start parsing certificates it never uses.
  const env = process.env.PATH === undefined ? {} : { PATH: process.env.PATH };
  const child = spawn(command[0], command[1], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env });
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
