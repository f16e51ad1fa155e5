/**
 * The orphan reaper: a small process the runner starts (detached, in its own
 * session) when it spawns its first app, so that apps do not outlive a runner
 * that was killed without running its cleanup (`kill -9`, the OOM killer, a
 * crash in native code). The runner starts it as a shell script
 * (reaper-script.ts, the same contract in a process that costs 2 ms of CPU
 * instead of 70); this Node program runs where there is no /bin/sh (a
 * distroless container, say).
 *
 * Apps run in their own process group, so that closing one can signal its
 * whole tree and a terminal's Ctrl-C reaches the runner only. The price is that
 * nothing ends them when the runner dies: an app busy in a call, or one that
 * ignores its stdin closing and SIGTERM, would run for good. The runner writes
 * one line to this process's stdin per app it starts (`track <pid> <start>`)
 * and stops (`untrack <pid>`). When stdin reaches EOF, the runner is gone,
 * whatever the signal: every group still tracked gets SIGTERM, then SIGKILL
 * after TERM_GRACE_MS, and the reaper exits. After a normal exit the runner
 * has untracked every app first, so the reaper exits at once.
 *
 * It never signals a group that is not one of the runner's apps. On Linux the
 * runner records the leader's start time from /proc; at EOF a live leader must
 * still have it (a reused pid does not), and a group whose leader has exited
 * is signalled only while it still has members, which keep its id from being
 * reused. Descendants that left the group (an app's helpers that called
 * setsid) are found through /proc and signalled too. An app outlives a killed
 * runner by at most about TERM_GRACE_MS.
 *
 * Other platforms:
 * - macOS (and other Unixes without /proc): the same reaper runs, but there is
 *   no start time to compare, so a group is signalled whenever a group with
 *   that id exists. A pid is only reused after its process and every member of
 *   its group have exited, and the runner untracks an app as soon as it closes
 *   it, so the risk is limited to an app that died on its own in the seconds
 *   before the runner was killed. Helpers that left the app's process group
 *   are not found (no /proc) and are not killed.
 * - Windows: no reaper is started (there are no process groups to signal).
 *   Apps of a runner killed through Task Manager or `taskkill /F` keep running
 *   until their stdin read fails; well-behaved MCP servers exit then, an app
 *   busy in a call or ignoring stdin does not.
 */
import { readProcessStart } from '../process-info.js';
import { groupExists, groupHasLiveMember, isAlive, listDescendants, signalAll } from './process-tree.js';

/** How long apps get to exit on SIGTERM before SIGKILL. */
const TERM_GRACE_MS = 1_000;
const POLL_EVERY_MS = 50;

/** Leader pid → its start time as the runner read it (`-` where there was none). */
const groups = new Map<number, string>();
let pending = '';
let reaping = false;

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  const lines = (pending + chunk).split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) applyLine(line);
});
// Nothing in reapAll throws (its /proc reads and signals catch their own errors) and it ends the process itself.
const reapOnEof = () => void reapAll();
process.stdin.on('end', reapOnEof);
process.stdin.on('close', reapOnEof);
process.stdin.on('error', reapOnEof);

function applyLine(line: string): void {
  const [verb, pidText, start] = line.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 1) return;
  if (verb === 'track') groups.set(pid, start ?? '-');
  else if (verb === 'untrack') groups.delete(pid);
}

/** SIGTERMs every app group still tracked and its strays, waits up to TERM_GRACE_MS, SIGKILLs what is left, exits. */
async function reapAll(): Promise<void> {
  if (reaping) return;
  reaping = true;
  const leaders = [...groups].filter(([pid, start]) => isRunnerApp(pid, start));
  // Read the strays before signalling: once a leader exits, its children are reparented and untraceable.
  const strays = new Map(leaders.flatMap(([pid]) => listDescendants(pid)).map((pid) => [pid, readProcessStart(pid)]));
  signalApps(leaders, strays, 'SIGTERM');
  const deadline = Date.now() + TERM_GRACE_MS;
  while (Date.now() < deadline && isAnyLeft(leaders, strays)) {
    await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
  }
  signalApps(leaders, strays, 'SIGKILL');
  process.exit(0);
}

function signalApps(leaders: [number, string][], strays: Map<number, string | null>, signal: NodeJS.Signals): void {
  for (const [pid, start] of leaders) {
    if (!isRunnerApp(pid, start)) continue;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone.
    }
  }
  signalAll([...strays].filter(([pid, start]) => readProcessStart(pid) === start).map(([pid]) => pid), signal);
}

/**
 * Whether `pid` still names the group of the app the runner tracked: a live
 * leader with the recorded start time, or, the leader gone, a group that
 * still has members (while it does, its id cannot be handed out again).
 */
function isRunnerApp(pid: number, start: string): boolean {
  const now = readProcessStart(pid);
  if (now !== null) return now === start;
  return groupExists(pid);
}

function isAnyLeft(leaders: [number, string][], strays: Map<number, string | null>): boolean {
  return leaders.some(([pid]) => groupHasLiveMember(pid)) || [...strays.keys()].some(isAlive);
}
