// How fast this machine is right now, for reading the figures that are not
// ratios against the raw client ((d) above all, which is milliseconds): the
// same small CPU-bound workload in a fresh Node process, the kind of work a
// workflow load does (building objects, JSON text, parsing it back, the
// scavenges that go with it). On a VM the same code can run 20-30% slower for
// half an hour; a (d) that moves with this probe is the machine, not the runner.
import { spawnSync } from 'node:child_process';
import { median, round } from './stats.mjs';

const WORKLOAD = `
const started = process.cpuUsage();
let kept = 0;
for (let round = 0; round < 3; round++) {
  const records = [];
  for (let i = 0; i < 20000; i++) records.push({ id: 's' + i, uses: 'app.tool', with: { text: 'item ' + i, n: i }, needs: i ? ['s' + (i - 1)] : [] });
  kept += JSON.parse(JSON.stringify(records)).length;
}
const used = process.cpuUsage(started);
process.stdout.write(String((used.user + used.system) / 1000) + ' ' + kept);
`;

/** The median CPU time (ms) of the workload over `runs` fresh processes. */
export function probeMachineSpeed(runs = 3) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const child = spawnSync(process.execPath, ['-e', WORKLOAD], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`the speed probe failed: ${child.stderr}`);
    times.push(Number(child.stdout.split(' ')[0]));
  }
  return round(median(times), 1);
}
