#!/usr/bin/env node
// The client command the conformance suite launches to test runner:
//
//   node scripts/conformance-runner-client.mjs <server-url>
//
// with MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT) set by the suite.
// It does what a runner user would: writes a runner.config.yaml with one app
// for the URL (with `auth:` for the auth scenarios), logs in with
// `runner auth login` where the app needs OAuth (fetching the authorization
// URL as a browser would), and runs a workflow that calls the tools the
// scenario expects (`runner tools` first where their names are not known).
// Runner itself runs on this Node (20); only the suite needs 22.
//
// On failure the last stderr line is `runner-client: <reason>`, which
// scripts/conformance.mjs shows in its table.
//
// RUNNER_CONFORMANCE_PROTOCOL=suite pins `protocol:` to the version the suite
// asks for (MCP_CONFORMANCE_PROTOCOL_VERSION); the default, auto, negotiates as
// a user's config would. RUNNER_CONFORMANCE_KEEP=1 keeps the workspace.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callsFromTools, ELICIT_ANSWERS, knownCalls, MACHINE_AUTH, readContext } from './conformance-scenarios.mjs';

const cli = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli', 'main.js');
const APP = 'conf';
const LOGIN_ROUNDS = 2;
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

class ClientFailure extends Error {}

async function main() {
  const url = process.argv.at(-1);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (!url?.startsWith('http')) throw new ClientFailure('usage: conformance-runner-client.mjs <server-url> (with MCP_CONFORMANCE_SCENARIO set)');
  const context = readContext();
  const dir = mkdtempSync(join(tmpdir(), 'runner-conformance-'));
  try {
    const env = {
      ...process.env,
      RUNNER_CREDENTIALS: join(dir, 'credentials.json'),
      CONF_CLIENT_SECRET: context.client_secret ?? '',
      CONF_PRIVATE_KEY: context.private_key_pem ?? '',
      CONF_ID_TOKEN: context.idp_id_token ?? '',
    };
    const config = writeConfig(dir, url, scenario, context);
    const runner = (args, options) => runCli(['--config', config, ...args], { cwd: dir, env, ...options });
    const oauth = scenario.startsWith('auth/') && !MACHINE_AUTH[scenario];
    if (oauth) await logIn(runner);
    let calls = knownCalls(scenario, context);
    if (!calls) calls = callsFromTools(scenario, await listTools(runner));
    if (calls.length === 0) {
      // Nothing to call: connecting and listing is the whole job.
      await listTools(runner);
      return;
    }
    const workflow = join(dir, 'conformance.yaml');
    writeFileSync(workflow, JSON.stringify(buildWorkflow(scenario, calls), null, 2));
    for (let round = 1; ; round++) {
      const outcome = await runWorkflow(runner, workflow);
      if (outcome.ok) return;
      // A step-up challenge (insufficient_scope) or an expired login: log in again, as a user would, and rerun.
      if (oauth && round < LOGIN_ROUNDS && /auth login/.test(outcome.reason)) {
        await logIn(runner);
        continue;
      }
      throw new ClientFailure(outcome.reason);
    }
  } finally {
    if (!process.env.RUNNER_CONFORMANCE_KEEP) rmSync(dir, { recursive: true, force: true });
    else process.stderr.write(`runner-client: workspace kept at ${dir}\n`);
  }
}

/** runner.config.yaml (as JSON, which YAML reads) with the one app and its `auth:`. */
function writeConfig(dir, url, scenario, context) {
  // RUNNER_CONFORMANCE_APP_TIMEOUT: longer where the suite runs every scenario at once (--requirements).
  const timeout = process.env.RUNNER_CONFORMANCE_APP_TIMEOUT ?? '20s';
  const app = { url, timeout, 'connect-timeout': timeout };
  const pinned = process.env.RUNNER_CONFORMANCE_PROTOCOL === 'suite' ? process.env.MCP_CONFORMANCE_PROTOCOL_VERSION : undefined;
  if (pinned) app.protocol = pinned;
  const machine = MACHINE_AUTH[scenario];
  if (scenario === 'auth/client-credentials-jwt') {
    app.auth = { type: 'client-credentials', 'client-id': context.client_id, 'private-key': '${CONF_PRIVATE_KEY}', ...(context.signing_algorithm && { algorithm: context.signing_algorithm }) };
  } else if (machine === 'client-credentials') app.auth = { type: 'client-credentials', 'client-id': context.client_id, 'client-secret': '${CONF_CLIENT_SECRET}' };
  else if (machine === 'workload-identity') {
    // Where a platform keeps a workload's token (a projected service account token): a file, read at each token request.
    writeFileSync(join(dir, 'workload.jwt'), `${context.valid_jwt}\n`);
    app.auth = { type: 'workload-identity', 'client-id': context.client_id, 'assertion-file': 'workload.jwt' };
  } else if (machine === 'enterprise-managed') {
    app.auth = {
      type: 'enterprise-managed',
      'client-id': context.client_id,
      'client-secret': '${CONF_CLIENT_SECRET}',
      // The suite's identity provider publishes partial metadata, so its token endpoint is given, as the raw client does.
      'idp-token-endpoint': context.idp_token_endpoint,
      'idp-client-id': context.idp_client_id,
      'id-token': '${CONF_ID_TOKEN}',
    };
  } else if (scenario.startsWith('auth/')) {
    // Without a client handed out, runner's client ID metadata document, as a user who hosts one would write it
    // (the same URL as the raw client's): used where the server supports those, else runner registers.
    app.auth = { type: 'oauth', 'client-id': context.client_id ?? CLIENT_METADATA_URL };
    if (context.client_secret) app.auth['client-secret'] = '${CONF_CLIENT_SECRET}';
  }
  const file = join(dir, 'runner.config.yaml');
  writeFileSync(file, JSON.stringify({ artifacts: 'artifacts', apps: { [APP]: app } }, null, 2));
  return file;
}

/** Steps that call the tools one after another (some scenarios check the order), answering questions where the scenario says. */
function buildWorkflow(scenario, calls) {
  const answers = ELICIT_ANSWERS[scenario];
  const steps = calls.map((call, index) => ({
    id: `call-${index + 1}`,
    uses: `${APP}.${call.name}`,
    with: call.arguments,
    ...(index > 0 && { needs: [`call-${index}`] }),
    ...(answers && { elicit: answers }),
  }));
  return { name: 'conformance', steps };
}

async function listTools(runner) {
  const result = await runner(['tools', APP, '--json']);
  if (result.code !== 0) throw new ClientFailure(`runner tools exited ${result.code}: ${lastLine(result.stderr)}`);
  const listing = JSON.parse(result.stdout);
  return (Array.isArray(listing) ? listing.find((entry) => entry.app === APP)?.tools : listing.tools) ?? [];
}

async function runWorkflow(runner, workflow) {
  const result = await runner(['run', workflow, '--json', '--yes']);
  let record;
  try {
    record = JSON.parse(result.stdout);
  } catch {
    return { ok: false, reason: `runner run exited ${result.code} without a run record: ${lastLine(result.stderr)}` };
  }
  const failed = record.steps.find((step) => step.status !== 'succeeded');
  if (!failed && result.code === 0) return { ok: true };
  const error = failed?.error;
  return { ok: false, reason: failed ? `step ${failed.uses} ${failed.status}: ${error ? `[${error.kind}] ${error.message}` : 'no error recorded'}` : `runner run exited ${result.code}` };
}

/**
 * `runner auth login`, with this process as the browser: it fetches the
 * authorization URL the login prints and follows the authorization server's
 * redirect to runner's 127.0.0.1 listener (the suite's server approves at once).
 */
async function logIn(runner) {
  let browsed = false;
  const result = await runner(['auth', 'login', APP, '--no-browser', '--timeout', process.env.RUNNER_CONFORMANCE_APP_TIMEOUT ?? '20s'], {
    onOutput: (text) => {
      const found = text.match(/https?:\/\/[^\s"'<>]+/g) ?? [];
      const authorization = found.find((candidate) => /[?&](client_id|response_type)=/.test(candidate) && new URL(candidate).hostname !== '127.0.0.1');
      if (authorization && !browsed) {
        browsed = true;
        void browse(authorization);
      }
    },
  });
  if (result.code !== 0) throw new ClientFailure(`runner auth login exited ${result.code}: ${lastLine(result.stderr) || lastLine(result.stdout)}`);
}

async function browse(authorizationUrl) {
  try {
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (location) await fetch(new URL(location, authorizationUrl));
  } catch (error) {
    process.stderr.write(`runner-client: the browser stand-in failed: ${error.message}${error.cause ? ` (${error.cause.message ?? error.cause})` : ''}\n`);
  }
}

/** Runs the runner CLI on this Node; `onOutput` sees stdout and stderr as they come. */
function runCli(args, { cwd, env, onOutput }) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      onOutput?.(String(chunk));
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      process.stderr.write(chunk);
      onOutput?.(String(chunk));
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

/** The line that says what went wrong: runner's last `error:` line (an app's HTML body can follow it), else the last line. */
function lastLine(text) {
  const lines = text.trim().split('\n').filter(Boolean);
  return (lines.findLast((line) => line.startsWith('error:')) ?? lines.at(-1) ?? '').slice(0, 400);
}

try {
  await main();
} catch (error) {
  process.stderr.write(`runner-client: ${error instanceof ClientFailure ? error.message : error.stack}\n`);
  process.exitCode = 1;
}
