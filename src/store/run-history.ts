import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunRecord } from '../artifacts/run-record.js';
import { RunnerError } from '../errors.js';

/** Run ids and workflow names as the artifacts folder lays them out: `<workflow>/<run-id>/run.json`. */
const RUN_ID = /^\d{8}-\d{6}-\d{3}-[0-9a-f]{4}$/;

/** Every recorded run under the artifacts folder, newest first. Unreadable records are skipped. */
export function listRuns(artifacts: string): RunRecord[] {
  if (!existsSync(artifacts)) return [];
  const runs: RunRecord[] = [];
  for (const workflow of readdirSync(artifacts, { withFileTypes: true })) {
    if (!workflow.isDirectory() || workflow.name.startsWith('.')) continue;
    for (const run of readdirSync(join(artifacts, workflow.name), { withFileTypes: true })) {
      if (!run.isDirectory() || !RUN_ID.test(run.name)) continue;
      const record = readRecord(join(artifacts, workflow.name, run.name, 'run.json'));
      if (record) runs.push(record);
    }
  }
  return runs.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** The run with this id (a unique prefix is enough); throws `not-found` (exit 2) otherwise. */
export function findRun(artifacts: string, id: string): RunRecord {
  const matches = listRuns(artifacts).filter((run) => run.id === id || run.id.startsWith(id));
  const exact = matches.find((run) => run.id === id);
  if (exact) return exact;
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new RunnerError('usage', `run id \`${id}\` is ambiguous: ${matches.map((run) => run.id).join(', ')}`, { hint: 'give more of the id' });
  }
  throw new RunnerError('not-found', `no run \`${id}\` under ${artifacts}`, { hint: 'list runs with `runner runs`' });
}

function readRecord(file: string): RunRecord | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as RunRecord;
  } catch {
    return undefined;
  }
}
