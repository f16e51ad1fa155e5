import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_ID_PATTERN } from '../artifacts/run-id.js';
import type { RunRecord, StepRecord } from '../artifacts/run-record.js';
import { WORKFLOW_NAME_PATTERN } from '../workflow/schema.js';
import type { RunOwner } from './run-store.js';
import type { SqliteRunStore } from './sqlite-run-store.js';
import { isRecord } from '../is-record.js';

const WORKFLOW_NAME = new RegExp(WORKFLOW_NAME_PATTERN);
const RUN_STATUSES = new Set(['running', 'succeeded', 'failed', 'cancelled']);
const IMPORTED_KEY = 'imported-run-folders';

/**
 * Brings runs recorded before the store existed (`<workflow>/<id>/run.json`)
 * into it, once per artifacts folder, so `runner runs` still lists them. A
 * file that is not a plausible run record is skipped; a record's own `dir` is
 * never used (the folder it was found in is). Returns how many were imported.
 */
export function importRunFolders(store: SqliteRunStore, owner: RunOwner): number {
  if (store.getMeta(IMPORTED_KEY) !== undefined) return 0;
  return store.inTransaction(() => {
    if (store.getMeta(IMPORTED_KEY) !== undefined) return 0; // another process did it meanwhile
    let count = 0;
    for (const { workflow, id, file } of findRunFiles(store.artifacts)) {
      const record = readRecord(file, workflow, id);
      if (!record || store.getRun(id)) continue;
      const { steps, ...run } = record;
      store.createRun(
        {
          run: { ...run, dir: join(store.artifacts, workflow, id) },
          steps: steps.map(({ items, ...step }) => (items ? { record: step, items } : { record: step })),
        },
        owner,
        { imported: true },
      );
      count++;
    }
    store.setMeta(IMPORTED_KEY, new Date(owner.heartbeatMs).toISOString());
    return count;
  });
}

function* findRunFiles(artifacts: string): Generator<{ workflow: string; id: string; file: string }> {
  if (!existsSync(artifacts)) return;
  for (const workflow of readdirSync(artifacts, { withFileTypes: true })) {
    if (!workflow.isDirectory() || !WORKFLOW_NAME.test(workflow.name)) continue;
    for (const run of readdirSync(join(artifacts, workflow.name), { withFileTypes: true })) {
      if (!run.isDirectory() || !RUN_ID_PATTERN.test(run.name)) continue;
      yield { workflow: workflow.name, id: run.name, file: join(artifacts, workflow.name, run.name, 'run.json') };
    }
  }
}

/** A run.json that looks like a run record of this folder; anything else is undefined. */
function readRecord(file: string, workflow: string, id: string): RunRecord | undefined {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(data) || data.id !== id || data.workflow !== workflow) return undefined;
  if (typeof data.status !== 'string' || !RUN_STATUSES.has(data.status) || typeof data.startedAt !== 'string') return undefined;
  if (!Array.isArray(data.steps) || !data.steps.every(isStepRecord)) return undefined;
  const trigger = isRecord(data.trigger) && typeof data.trigger.type === 'string' ? data.trigger : { type: 'manual' };
  return {
    ...(data as unknown as RunRecord),
    trigger: trigger as RunRecord['trigger'],
    inputs: isRecord(data.inputs) ? data.inputs : {},
    endedAt: typeof data.endedAt === 'string' ? data.endedAt : null,
    apps: isRecord(data.apps) ? (data.apps as RunRecord['apps']) : {},
  };
}

function isStepRecord(step: unknown): step is StepRecord {
  if (!isRecord(step) || typeof step.id !== 'string' || typeof step.status !== 'string' || typeof step.uses !== 'string') return false;
  if (!Array.isArray(step.history ?? [])) return false;
  return step.items === undefined || (Array.isArray(step.items) && step.items.every((item: unknown) => isRecord(item) && typeof item.index === 'number'));
}
