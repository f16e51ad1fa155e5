// The other side of bench/lib/bullmq-floor.mjs: a BullMQ Worker that does nothing, in a process of its own.
import { Worker } from 'bullmq';

const worker = new Worker('bench-floor', async (job) => job.data.n, { connection: { url: process.argv[2], maxRetriesPerRequest: null }, concurrency: 8 });
await worker.waitUntilReady();
process.stdout.write('ready\n');
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
