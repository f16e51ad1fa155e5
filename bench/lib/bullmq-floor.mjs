// BullMQ's own round trip on this machine, for (h): `queue.add` of an empty
// job, a no-op Worker in another process, `job.waitUntilFinished` through
// QueueEvents, one job at a time. No runner code: the floor any call
// through BullMQ pays, against which runner's own share of (h) is read.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { repoRoot } from './paths.mjs';
import { median, round } from './stats.mjs';

export async function measureBullmqFloor(url, count = 500) {
  const worker = spawn(process.execPath, [join(repoRoot, 'bench', 'lib', 'bullmq-floor-worker.mjs'), url], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    worker.stdout.once('data', resolve);
    worker.once('exit', (code) => reject(new Error(`the BullMQ floor worker exited (${code})`)));
  });
  const connection = { url, maxRetriesPerRequest: null };
  const queue = new Queue('bench-floor', { connection });
  const events = new QueueEvents('bench-floor', { connection });
  try {
    await events.waitUntilReady();
    const times = [];
    for (let i = 0; i < count + 50; i++) {
      const started = performance.now();
      const job = await queue.add('noop', { n: i }, { removeOnComplete: { age: 60 } });
      await job.waitUntilFinished(events);
      if (i >= 50) times.push(performance.now() - started); // the first 50 warm up
    }
    times.sort((a, b) => a - b);
    const mean = times.reduce((sum, ms) => sum + ms, 0) / times.length;
    return { count, medianUs: round(median(times) * 1000, 0), meanUs: round(mean * 1000, 0), p90Us: round(times[Math.floor(times.length * 0.9)] * 1000, 0) };
  } finally {
    await events.close();
    await queue.close();
    await new Promise((resolve) => {
      worker.once('exit', resolve);
      worker.kill('SIGTERM');
    });
  }
}
