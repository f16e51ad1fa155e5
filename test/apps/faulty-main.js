// The faulty fixture server's process: its flags, its transport and how it stops (see faulty.js for
// the flags and tools). Nothing here runs on import: faulty.js runs main(), and so does the startup
// snapshot the test suite builds of it (faulty-snapshot.js).
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { parseFaultyFlags } from './faulty-flags.js';
import { createFaultyServer } from './faulty-tools.js';

const log = (line) => process.stderr.write(`faulty: ${line}\n`);

// Writes a junk line (not JSON, or JSON that is not JSON-RPC) after every message.
class JunkStdioTransport extends StdioServerTransport {
  junkCount = 0;
  async send(message) {
    await super.send(message);
    writeJunk(this.junkCount++);
  }
}

function writeJunk(n) {
  process.stdout.write(n % 2 === 0 ? `faulty junk line ${n} {not json\n` : `{"junk":${n}}\n`);
}

// A progress bar drawn with `\r` and never a newline, BYTES long, then `flood done`: what an app's stderr can do to a log.
async function floodStderr(bytes) {
  const chunk = `${'#'.repeat(65_535)}\r`;
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    if (!process.stderr.write(chunk)) await new Promise((resolve) => process.stderr.once('drain', resolve));
  }
  log('flood done');
}

function spawnGrandchild(pidFile) {
  const child = spawn(process.execPath, ['-e', 'setInterval(()=>{},1e9)'], { stdio: 'ignore' });
  appendFileSync(pidFile, `${child.pid}\n`);
  // The grandchild must not keep this process alive, only outlive it.
  child.unref();
}

function onceOnly(fn) {
  let called = false;
  return () => {
    if (!called) {
      called = true;
      fn();
    }
  };
}

export async function main() {
  // A client that has gone away must not turn a log line into a crash.
  process.stderr.on('error', () => {});
  let options;
  try {
    options = parseFaultyFlags(process.argv.slice(2));
  } catch (error) {
    log(error.message);
    process.exit(2);
  }
  if (options.crashOnStart) {
    log('boom at startup');
    process.exit(1);
  }
  if (options.ignoreSigterm) {
    process.on('SIGTERM', () => log('ignoring SIGTERM'));
    process.on('SIGINT', () => log('ignoring SIGINT'));
  }
  if (options.pidFile) appendFileSync(options.pidFile, `${process.pid}\n`);
  if (options.ignoreStdinClose) setInterval(() => {}, 1 << 30);
  if (options.grandchildPidFile) spawnGrandchild(options.grandchildPidFile);
  if (options.junkStdout) [0, 1].forEach(writeJunk);
  // Before serving: a run that reaches the app has all of it in its log, however slow the reading.
  if (options.stderrFloodBytes) await floodStderr(Number(options.stderrFloodBytes));
  if (options.slowStartMs > 0) await sleep(options.slowStartMs);

  if (options.failHandshake) {
    process.stdin.once('data', () => {
      log('refusing handshake');
      process.exit(3);
    });
    return;
  }
  if (options.neverAnswer) {
    process.stdin.on('data', () => {});
    onStdinEnd(options, () => process.exit(0));
    return;
  }

  const transport = options.junkStdout ? new JunkStdioTransport() : new StdioServerTransport();
  let close;
  if (options.legacyOnly) {
    const server = createFaultyServer(options);
    await server.connect(transport);
    close = () => server.close();
  } else {
    const handle = serveStdio(() => createFaultyServer(options), { transport, onerror: (error) => log(`stdio error: ${error.message}`) });
    close = () => handle.close();
  }
  const stop = onceOnly(() => close().finally(() => process.exit(0)));
  onStdinEnd(options, stop);
  if (!options.ignoreSigterm) {
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  }
}

// The stdio binding says a server exits when its stdin ends; --ignore-stdin-close breaks that rule.
function onStdinEnd(options, stop) {
  if (options.ignoreStdinClose) {
    process.stdin.once('end', () => log('stdin ended; staying up'));
    return;
  }
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
}
