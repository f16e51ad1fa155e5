#!/usr/bin/env node
// Demo MCP app "image": renders, resizes, crops, converts and inspects images with sharp.
// Works only inside the artifacts root; see ../README.md for flags and annotations.
import { runApp } from '../lib/serve.js';
import { createImageServer } from './app.js';

await runApp({ name: 'image', createServer: createImageServer });
