import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { groupExists, groupHasLiveMember } from '../../src/apps/process-tree.js';

/** The state letter of a process (R, S, Z…), or null once it is gone. */
function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
  } catch {
    return null;
  }
}

describe.runIf(process.platform === 'linux')('groupHasLiveMember', () => {
  it('counts a group whose only member is a zombie as gone, though its id is still in use', async () => {
    // The child leads a group of its own (setsid) and exits once its parent has become `sleep`, which
    // never reaps it: a zombie, alone in its group, for as long as the parent lives. (Had it exited while
    // its parent was still the shell, the shell could reap it first: 25 of 200 times on a loaded machine.)
    const child = 'while [ "$(cat /proc/$PPID/comm)" != sleep ]; do sleep 0.01; done';
    const parent = spawn('sh', ['-c', `setsid sh -c '${child}' & echo $!; exec sleep 30`], { stdio: ['ignore', 'pipe', 'ignore'] });
    onTestFinished(() => void parent.kill('SIGKILL'));
    const zombie = await new Promise<number>((resolve) => parent.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))));
    await expect.poll(() => stateOf(zombie), { timeout: 10_000 }).toBe('Z');
    expect(groupExists(zombie)).toBe(true);
    expect(groupHasLiveMember(zombie)).toBe(false);
  });

  it('counts a group with a running member as live, and gone once that member has exited', async () => {
    const leader = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    onTestFinished(() => void leader.kill('SIGKILL'));
    expect(groupHasLiveMember(leader.pid!)).toBe(true);
    const exited = new Promise((resolve) => leader.once('exit', resolve));
    leader.kill('SIGKILL');
    await exited;
    expect(groupHasLiveMember(leader.pid!)).toBe(false);
  });
});
