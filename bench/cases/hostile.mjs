// (g) What hostile apps and files can drive: each figure is one `runner`
// process (node dist/cli/main.js ...), its wall time from spawn to exit and
// its peak RSS (VmHWM polled every 20 ms: bench/lib/peak-rss.mjs; the runner
// process alone, not the apps it starts), in a fresh temp workspace.
//
//   stderrFlood  faulty.js --stderr-flood 80 MB (no newline), step faulty.slow {ms: 500}: the log stays ≤ max-log
//   endlessHttp  an HTTP app whose every POST answers with an endless body (the bench stops at 1 GiB)
//   bigResult    faulty.big {bytes: 60,000,000} over stdio, under the default max-result of 64 MiB
//   bigImage     faulty.bigImage {bytes: 45,000,000} over stdio: 60 MB of base64, under the default max-result of 64 MiB;
//                the saved image-0.png must be exactly those bytes
//   aliasBomb    `runner validate` of 10 levels of 9 YAML aliases (9^10 nodes): exit 2
//   manyTools    a one-step run on bench/apps/many-tools.mjs, 10,000 tools in its tools/list
//   bigForeach   a foreach over 100,000 input items: fails as `input` naming max-items, before any call
//
// One run of each (they are bounds, not speeds; --reps does not apply).
// Anything that did not end the way the bounds promise is listed in
// `problems` and printed as UNEXPECTED, and the case goes on.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureNodeProcess } from '../lib/peak-rss.mjs';
import { round, say } from '../lib/stats.mjs';
import { cliPath, createWorkspace } from '../lib/workspace.mjs';
import { deterministicBytes } from '../../test/apps/faulty-tools.js';
import { findFile } from '../../scripts/find-file.mjs';

const MiB = 1024 * 1024;
/** The runner's defaults, as its config schema states them. */
const MAX_LOG = 10 * MiB;
const MAX_RESULT = 64 * MiB;
const MAX_ITEMS = 10_000;
/** A marker line the log keeps where it left the middle out: `[runner: …MiB of this app's stderr left out here (max-log); the last part follows]`. */
const MARKER_ROOM = 200;
/** The peak RSS target of a result at the limit, from the issue: under 4× the limit. */
export const RESULT_RSS_TARGET = 4;

const FLOOD_BYTES = 83_886_080;
const BIG_RESULT_BYTES = 60_000_000;
/** Binary bytes of the big image: 60,000,000 characters of base64 on the wire. */
const BIG_IMAGE_BYTES = 45_000_000;
const HTTP_BOUND = 1024 * MiB;
const TOOL_COUNT = 10_000;
const FOREACH_ITEMS = 100_000;

const manyToolsApp = fileURLToPath(new URL('../apps/many-tools.mjs', import.meta.url));
const mb = (bytes) => (bytes === null ? null : round(bytes / 1e6, 1));

/** Runs the CLI in `workspace` with `args`, timed and measured. */
function runner(workspace, args) {
  return measureNodeProcess([cliPath, ...args], { cwd: workspace.dir });
}

/** The run folders under the workspace's artifacts (every workflow's), with their run.json parsed. */
function runRecords(workspace) {
  const records = [];
  if (!existsSync(workspace.artifacts)) return records;
  for (const workflow of readdirSync(workspace.artifacts)) {
    if (workflow.startsWith('.')) continue;
    for (const id of readdirSync(join(workspace.artifacts, workflow))) {
      const file = join(workspace.artifacts, workflow, id, 'run.json');
      if (existsSync(file)) records.push({ dir: join(workspace.artifacts, workflow, id), record: JSON.parse(readFileSync(file, 'utf8')) });
    }
  }
  return records;
}

/** The one run the workspace holds, or a problem. */
function onlyRun(workspace, problems) {
  const runs = runRecords(workspace);
  if (runs.length !== 1) problems.push(`expected one run folder, found ${runs.length}`);
  return runs[0] ?? null;
}

function tail(text, chars = 600) {
  return text.length > chars ? `…${text.slice(-chars)}` : text;
}

/** Runs one figure in its own workspace; a throw becomes a problem, the case goes on. */
async function figure(name, body) {
  const problems = [];
  try {
    const result = await body(problems);
    return { ...result, problems };
  } catch (error) {
    problems.push(`threw: ${error.message}`);
    return { problems };
  }
}

function common(measured) {
  return { ms: round(measured.ms, 0), peakRssMB: mb(measured.peakRssBytes), exitCode: measured.code };
}

async function stderrFlood() {
  return figure('stderrFlood', async (problems) => {
    const workspace = createWorkspace();
    try {
      writeFileSync(
        join(workspace.dir, 'runner.config.yaml'),
        `artifacts: ${JSON.stringify(workspace.artifacts)}\napps:\n  faulty:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([...workspace.app.args, '--stderr-flood', String(FLOOD_BYTES)])}\npolicy: { read-only: allow }\n`,
      );
      const workflow = workspace.write('flood.yaml', 'name: flood\nsteps:\n  - id: a\n    uses: faulty.slow\n    with: { ms: 500 }\n');
      const measured = await runner(workspace, ['run', workflow]);
      if (measured.code !== 0) problems.push(`runner exited ${measured.code}: ${tail(measured.stderr)}`);
      const run = onlyRun(workspace, problems);
      const log = run && join(run.dir, 'logs', 'faulty.log');
      const logBytes = log && existsSync(log) ? statSync(log).size : null;
      if (logBytes === null) problems.push('no logs/faulty.log');
      else if (logBytes > MAX_LOG + MARKER_ROOM) problems.push(`log is ${logBytes} bytes, over max-log ${MAX_LOG} + ${MARKER_ROOM}`);
      const text = logBytes === null ? '' : readFileSync(log, 'utf8');
      const marker = /\[runner: [\d.]+MiB of this app's stderr left out here \(max-log\); the last part follows\]/.test(text);
      if (logBytes !== null && !marker) problems.push('the log has no max-log marker');
      return {
        ...common(measured),
        floodBytes: FLOOD_BYTES,
        logBytes,
        logLimitBytes: MAX_LOG,
        logMet: logBytes !== null && logBytes <= MAX_LOG + MARKER_ROOM,
        marker,
        // Whether the app got to write all 80 MB before the runner closed it after the 500 ms step.
        floodDone: text.trimEnd().endsWith('faulty: flood done'),
        stepStatus: run?.record.steps?.[0]?.status ?? null,
      };
    } finally {
      workspace.remove();
    }
  });
}

async function endlessHttp() {
  return figure('endlessHttp', async (problems) => {
    let sent = 0;
    let requests = 0;
    const server = createServer((request, response) => {
      requests++;
      request.resume();
      response.writeHead(200, { 'content-type': 'application/json' });
      let open = true;
      response.on('close', () => (open = false));
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pour = () => {
        // Bounded by the bench, so the case ends even if the runner never stops reading.
        while (open && sent < HTTP_BOUND) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pour);
        }
        response.end();
      };
      pour();
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const workspace = createWorkspace();
    try {
      const { port } = server.address();
      writeFileSync(
        join(workspace.dir, 'runner.config.yaml'),
        `artifacts: ${JSON.stringify(workspace.artifacts)}\napps:\n  endless:\n    url: http://127.0.0.1:${port}/mcp\npolicy: { read-only: allow, other: allow, open-world: allow }\n`,
      );
      const workflow = workspace.write('endless.yaml', 'name: endless\nsteps:\n  - id: a\n    uses: endless.anything\n');
      const measured = await runner(workspace, ['run', workflow]);
      const run = onlyRun(workspace, problems);
      const error = run?.record.steps?.[0]?.error ?? null;
      if (!error?.message?.includes('max-result of 64MiB')) problems.push(`expected the step to fail naming max-result of 64MiB, got ${JSON.stringify(error)} (exit ${measured.code}: ${tail(measured.stderr)})`);
      if (sent >= HTTP_BOUND) problems.push('the server reached its own 1 GiB bound: the runner never stopped reading');
      return {
        ...common(measured),
        sentBytes: sent,
        sentMB: mb(sent),
        requests,
        limitBytes: MAX_RESULT,
        errorKind: error?.kind ?? null,
        errorMessage: error?.message ?? null,
      };
    } finally {
      workspace.remove();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
}

/** Runs a one-step workflow calling `uses` with `{ bytes }`; its peak RSS over the limit, and the problems found. */
async function measureOneStep(workspace, problems, uses, bytes) {
  const workflow = workspace.write('one.yaml', `name: one\nsteps:\n  - id: a\n    uses: ${uses}\n    with: { bytes: ${bytes} }\n`);
  const measured = await runner(workspace, ['run', workflow]);
  if (measured.code !== 0) problems.push(`runner exited ${measured.code}: ${tail(measured.stderr)}`);
  const run = onlyRun(workspace, problems);
  const step = run?.record.steps?.[0];
  if (step?.status !== 'succeeded') problems.push(`step ${step?.status}: ${JSON.stringify(step?.error)}`);
  const ratio = measured.peakRssBytes === null ? null : round(measured.peakRssBytes / MAX_RESULT, 2);
  if (ratio !== null && ratio >= RESULT_RSS_TARGET) problems.push(`peak RSS ${mb(measured.peakRssBytes)} MB is ${ratio}× the limit (target < ${RESULT_RSS_TARGET}×)`);
  return { measured, run, step, ratio };
}

async function bigResult() {
  return figure('bigResult', async (problems) => {
    const workspace = createWorkspace();
    try {
      const { measured, step, ratio } = await measureOneStep(workspace, problems, 'faulty.big', BIG_RESULT_BYTES);
      return {
        ...common(measured),
        bytes: BIG_RESULT_BYTES,
        limitBytes: MAX_RESULT,
        rssOverLimit: ratio,
        target: RESULT_RSS_TARGET,
        met: ratio === null ? null : ratio < RESULT_RSS_TARGET,
        stepStatus: step?.status ?? null,
      };
    } finally {
      workspace.remove();
    }
  });
}

async function bigImage() {
  return figure('bigImage', async (problems) => {
    const workspace = createWorkspace();
    try {
      const { measured, run, step, ratio } = await measureOneStep(workspace, problems, 'faulty.bigImage', BIG_IMAGE_BYTES);
      // The saved file must be the app's bytes exactly, wherever the run folder put the step's files.
      const saved = run ? findFile(run.dir, 'image-0.png') : null;
      let intact = false;
      if (!saved) problems.push('no image-0.png in the run folder');
      else {
        intact = readFileSync(saved).equals(deterministicBytes(BIG_IMAGE_BYTES));
        if (!intact) problems.push(`image-0.png (${statSync(saved).size} bytes) differs from the ${BIG_IMAGE_BYTES} bytes the app sent`);
      }
      return {
        ...common(measured),
        bytes: BIG_IMAGE_BYTES,
        base64Bytes: Math.ceil(BIG_IMAGE_BYTES / 3) * 4,
        limitBytes: MAX_RESULT,
        rssOverLimit: ratio,
        target: RESULT_RSS_TARGET,
        met: ratio === null ? null : ratio < RESULT_RSS_TARGET,
        intact,
        stepStatus: step?.status ?? null,
      };
    } finally {
      workspace.remove();
    }
  });
}


/** A step timeout of this long against an app that never answers its handshake (its connect-timeout stays 30 s). */
const NEVER_ANSWERS_TIMEOUT_MS = 2000;

async function neverAnswers() {
  return figure('neverAnswers', async (problems) => {
    const workspace = createWorkspace();
    try {
      writeFileSync(
        join(workspace.dir, 'runner.config.yaml'),
        `artifacts: ${JSON.stringify(workspace.artifacts)}\napps:\n  faulty:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([...workspace.app.args, '--never-answer'])}\npolicy: { read-only: allow }\n`,
      );
      const workflow = workspace.write('mute.yaml', `name: mute\nsteps:\n  - id: a\n    uses: faulty.echo\n    timeout: ${NEVER_ANSWERS_TIMEOUT_MS}ms\n`);
      const measured = await runner(workspace, ['run', workflow]);
      const error = onlyRun(workspace, problems)?.record.steps?.[0]?.error;
      if (error?.kind !== 'timeout' || error?.outcome !== 'not-sent') problems.push(`expected the step to time out with nothing sent, got ${JSON.stringify(error)}`);
      return { ...common(measured), timeoutMs: NEVER_ANSWERS_TIMEOUT_MS, errorKind: error?.kind ?? null, errorMessage: error?.message ?? null };
    } finally {
      workspace.remove();
    }
  });
}

async function aliasBomb() {
  return figure('aliasBomb', async (problems) => {
    const workspace = createWorkspace();
    try {
      // As in test/unit/workflow-load.test.ts: 10 levels, each a list of 9 aliases of the level below.
      const levels = ['    l0: &l0 [x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i < 10; i++) levels.push(`    l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(', ')}]`);
      const workflow = workspace.write('bomb.yaml', ['name: bomb', 'steps:', '  - id: a', '    uses: faulty.echo', '    with:', ...levels, ''].join('\n'));
      const measured = await runner(workspace, ['validate', workflow]);
      const output = measured.stdout + measured.stderr;
      if (measured.code !== 2) problems.push(`expected exit 2, got ${measured.code}: ${tail(output)}`);
      const named = output.includes('YAML aliases expand to more than 100,000 nodes');
      if (!named) problems.push(`the error does not name the alias limit: ${tail(output)}`);
      return { ...common(measured), namedLimit: named };
    } finally {
      workspace.remove();
    }
  });
}

async function manyTools() {
  return figure('manyTools', async (problems) => {
    const workspace = createWorkspace();
    try {
      writeFileSync(
        join(workspace.dir, 'runner.config.yaml'),
        `artifacts: ${JSON.stringify(workspace.artifacts)}\napps:\n  many:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([manyToolsApp, String(TOOL_COUNT)])}\npolicy: { read-only: allow }\n`,
      );
      const workflow = workspace.write('many.yaml', `name: many\nsteps:\n  - id: a\n    uses: many.tool_${TOOL_COUNT - 1}\n    with: { text: last }\n`);
      const measured = await runner(workspace, ['run', workflow]);
      if (measured.code !== 0) problems.push(`runner exited ${measured.code}: ${tail(measured.stderr)}`);
      const step = onlyRun(workspace, problems)?.record.steps?.[0];
      if (step?.status !== 'succeeded' || step?.text !== 'last') problems.push(`step ${step?.status}: ${JSON.stringify(step?.error ?? step?.text)}`);
      return { ...common(measured), tools: TOOL_COUNT, stepStatus: step?.status ?? null };
    } finally {
      workspace.remove();
    }
  });
}

async function bigForeach() {
  return figure('bigForeach', async (problems) => {
    const workspace = createWorkspace();
    try {
      const counter = join(workspace.dir, 'counter.log');
      // faulty.work appends a line to --counter per execution: an empty counter shows no call was made.
      writeFileSync(
        join(workspace.dir, 'runner.config.yaml'),
        `artifacts: ${JSON.stringify(workspace.artifacts)}\napps:\n  faulty:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([...workspace.app.args, '--counter', counter])}\npolicy: { read-only: allow, other: allow }\n`,
      );
      const inputs = workspace.write('inputs.json', JSON.stringify({ items: Array.from({ length: FOREACH_ITEMS }, (_, i) => i) }));
      const workflow = workspace.write(
        'fan.yaml',
        ['name: fan', 'inputs:', '  items: { type: array }', 'steps:', '  - id: fan', '    uses: faulty.work', '    foreach: ${{ inputs.items }}', '    with: { label: "${{ item }}" }', ''].join('\n'),
      );
      const measured = await runner(workspace, ['run', workflow, '--inputs', inputs]);
      const step = onlyRun(workspace, problems)?.record.steps?.[0];
      const error = step?.error ?? null;
      if (error?.kind !== 'input' || !error.message?.includes('max-items')) problems.push(`expected the step to fail as input naming max-items, got ${step?.status} ${JSON.stringify(error)} (exit ${measured.code}: ${tail(measured.stderr)})`);
      const calls = existsSync(counter) ? readFileSync(counter, 'utf8').split('\n').filter(Boolean).length : 0;
      if (calls > 0) problems.push(`${calls} calls were made before the step failed`);
      return { ...common(measured), items: FOREACH_ITEMS, limit: MAX_ITEMS, calls, errorKind: error?.kind ?? null, errorMessage: error?.message ?? null };
    } finally {
      workspace.remove();
    }
  });
}

function report(label, result, details) {
  const problems = result.problems.length === 0 ? '' : `; UNEXPECTED: ${result.problems.join('; ')}`;
  const head = result.ms === undefined ? 'not measured' : `${result.ms} ms, peak RSS ${result.peakRssMB} MB`;
  say(`    ${label}: ${head}${result.ms === undefined ? '' : details(result)}${problems}`);
}

export async function benchHostile() {
  // For scale: the runner doing nothing (`--version`).
  const idle = await figure('idle', async () => {
    const workspace = createWorkspace();
    try {
      return common(await runner(workspace, ['--version']));
    } finally {
      workspace.remove();
    }
  });
  say(`(g) hostile apps and files, one runner process each, spawn to exit, peak RSS = the runner's VmHWM (polled every 20 ms); \`runner --version\` ${idle.ms} ms, ${idle.peakRssMB} MB`);

  const flood = await stderrFlood();
  report(`stderr flood of ${mb(FLOOD_BYTES)} MB without a newline, 500 ms step`, flood, (r) => `, log ${r.logBytes} bytes (max-log ${MAX_LOG} + marker: ${r.logMet ? 'met' : 'MISSED'}), step ${r.stepStatus}, app finished flooding: ${r.floodDone}`);
  const http = await endlessHttp();
  report('endless HTTP body (max-result 64MiB)', http, (r) => `, server sent ${r.sentMB} MB in ${r.requests} request(s) before the runner stopped reading; step ${r.errorKind}`);
  const big = await bigResult();
  report(`${mb(BIG_RESULT_BYTES)} MB result over stdio (max-result 64MiB)`, big, (r) => `, peak RSS / limit ${r.rssOverLimit} (< ${RESULT_RSS_TARGET} ${r.met ? 'met' : 'MISSED'}), step ${r.stepStatus}`);
  const image = await bigImage();
  report(`${mb(BIG_IMAGE_BYTES)} MB image (${mb(Math.ceil(BIG_IMAGE_BYTES / 3) * 4)} MB of base64) over stdio (max-result 64MiB)`, image, (r) => `, peak RSS / limit ${r.rssOverLimit} (< ${RESULT_RSS_TARGET} ${r.met ? 'met' : 'MISSED'}), step ${r.stepStatus}, file intact: ${r.intact}`);
  const mute = await neverAnswers();
  report(`an app that never answers its handshake, step timeout ${NEVER_ANSWERS_TIMEOUT_MS} ms (connect-timeout 30 s)`, mute, (r) => `, step ${r.errorKind}`);
  const bomb = await aliasBomb();
  report('alias bomb (9^10 nodes), `runner validate`', bomb, (r) => `, exit ${r.exitCode}`);
  const tools = await manyTools();
  report(`${TOOL_COUNT.toLocaleString('en')} tools in tools/list, one call`, tools, (r) => `, step ${r.stepStatus}`);
  const fan = await bigForeach();
  report(`foreach over ${FOREACH_ITEMS.toLocaleString('en')} input items`, fan, (r) => `, step failed as ${r.errorKind}, ${r.calls} calls made`);

  const results = { stderrFlood: flood, endlessHttp: http, bigResult: big, bigImage: image, neverAnswers: mute, aliasBomb: bomb, manyTools: tools, bigForeach: fan };
  const problems = Object.entries(results).flatMap(([name, result]) => result.problems.map((problem) => `${name}: ${problem}`));
  return {
    rssMethod: 'VmHWM of the runner process, polled every 20 ms',
    idle,
    ...results,
    // Every bound held: no figure ended otherwise than the limits promise (timings are figures, not targets).
    boundsHeld: problems.length === 0,
    // Both results at the limit (text and image) stayed under the RSS target.
    met: big.met == null || image.met == null ? null : big.met && image.met,
  };
}
