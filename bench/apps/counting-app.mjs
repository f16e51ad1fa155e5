#!/usr/bin/env node
// The faulty fixture app, counting its own starts: appends this process's pid
// to SPAWN_LOG, then runs test/apps/faulty.js with the remaining flags. (c)
// launches it on both sides to show how many processes one run spawns.
//
//   node bench/apps/counting-app.mjs SPAWN_LOG [faulty flags...]
import { appendFileSync } from 'node:fs';

const [spawnLog] = process.argv.splice(2, 1);
appendFileSync(spawnLog, `${process.pid}\n`);
await import('../../test/apps/faulty.js');
