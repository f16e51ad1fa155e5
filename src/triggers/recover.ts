import { readdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord } from '../artifacts/run-record.js';
import type { RunnerConfig } from '../config/types.js';
import { messageOf, RunnerError } from '../errors.js';
import type { ResumeOptions } from '../scheduler/resume.js';
import { isOwnerLive } from '../store/run-owner.js';
import type { RunOwner, RunStore } from '../store/run-store.js';
import { takeOverRun } from '../store/take-over.js';
import type { Workflow } from '../workflow/types.js';
import { claimRootFor, releaseClaim } from './claim.js';
import type { ServiceEvent, TriggerRecord } from './events.js';
import type { FileTrigger } from './file-trigger.js';
import { hashFile, type ContentMark, type SeenStore } from './seen-store.js';

/** What recovery needs from the service that runs it. */
export interface RecoveryHost {
  store: RunStore;
  config: RunnerConfig;
  seen: SeenStore;
  owner: RunOwner;
  nowMs(): number;
  emit(event: ServiceEvent): void;
  /** Starts the resumed run; `finish` does the trigger's bookkeeping after it. */
  resume(workflow: Workflow, trigger: TriggerRecord, resume: ResumeOptions, finish?: (record: RunRecord | undefined) => Promise<string | undefined>): void;
  /** Watches a waiting run until its approvals are answered, then continues it; `finish` as for resume. */
  watchApproval(workflow: Workflow, trigger: TriggerRecord, runId: string, finish?: (record: RunRecord | undefined) => Promise<string | undefined>): void;
}

/**
 * Before any trigger starts: finds the watch- and schedule-triggered runs of
 * these workflows that a runner left unfinished when it died (their owner is
 * gone) and resumes them, in the same run, keeping what they had done. A
 * watched file's content marker is taken again first, so the file is not run
 * a second time from scratch (`--initial`). Manual runs are left to `runner resume`.
 */
export async function resumeInterruptedRuns(host: RecoveryHost, workflows: Workflow[]): Promise<void> {
  const byName = new Map(workflows.map((workflow) => [workflow.name, workflow]));
  for (const summary of host.store.unfinishedRuns([...byName.keys()])) {
    const workflow = byName.get(summary.workflow)!;
    const trigger = summary.trigger as TriggerRecord;
    if (trigger.type !== 'watch' && trigger.type !== 'schedule') continue;
    if (summary.owner && isOwnerLive(summary.owner, host.nowMs())) continue;
    const stored = host.store.getRun(summary.id);
    if (!stored) continue;
    let record: RunRecord;
    try {
      record = takeOverRun(host.store, stored, { owner: host.owner, nowMs: host.nowMs(), secrets: host.config.secretEntries });
    } catch (error) {
      if (error instanceof RunnerError && error.code === 'busy') continue; // another runner got there first
      host.emit({ type: 'warning', workflow: workflow.name, message: `run ${summary.id} was interrupted and cannot be resumed: ${messageOf(error)}` });
      continue;
    }
    const finish = trigger.type === 'watch' ? await retakeFile(host, workflow, record.trigger as TriggerRecord & { type: 'watch' }) : undefined;
    host.emit({ type: 'recovered', workflow: workflow.name, runId: summary.id, action: 'resumed', reason: 'its runner stopped before it ended' });
    host.resume(workflow, record.trigger as TriggerRecord, { record, rerunUnknown: false }, finish);
  }
}

/**
 * Before any trigger starts: the watch- and schedule-triggered runs of these
 * workflows that wait for an approval (a runner stopped while they waited)
 * are watched again, to be continued once answered. A watched file's content
 * marker is taken again, so its file is neither run again nor released.
 * Manual runs are left to `runner resume`.
 */
export async function watchWaitingRuns(host: RecoveryHost, workflows: Workflow[]): Promise<void> {
  for (const workflow of workflows) {
    for (const summary of host.store.listRuns({ workflow: workflow.name, status: 'waiting' })) {
      const trigger = summary.trigger as TriggerRecord;
      if (trigger.type !== 'watch' && trigger.type !== 'schedule') continue;
      const finish = trigger.type === 'watch' ? await retakeFile(host, workflow, trigger) : undefined;
      host.watchApproval(workflow, trigger, summary.id, finish);
    }
  }
}

/** Takes a resumed watch run's content marker again, and says what to do with its file when the run ends. */
async function retakeFile(host: RecoveryHost, workflow: Workflow, trigger: TriggerRecord & { type: 'watch' }) {
  const hash = trigger.hash?.replace(/^sha256:/, '');
  if (hash) await host.seen.take(workflow.name, hash, trigger.source, host.nowMs());
  return async (record: RunRecord | undefined) => {
    const succeeded = record?.status === 'succeeded';
    if (hash) await host.seen.finish(workflow.name, hash, { runId: record?.id ?? '', path: trigger.source, succeeded }, host.nowMs());
    if (trigger.path === trigger.source || !(await exists(trigger.path))) return undefined;
    return releaseClaim(trigger.path, succeeded ? 'done' : 'failed');
  };
}

/**
 * Once the watches are up: triggers a runner took but never started a run
 * for (it died between noticing a file and recording the run) are run now,
 * and files left in `processing/` are put where they belong: back where they
 * came from when no run had started, into `done/` or `failed/` when their run
 * had ended. Each is reported; none stays in `processing/` without a word.
 */
export async function recoverLostTriggers(host: RecoveryHost, workflow: Workflow, trigger: FileTrigger): Promise<void> {
  const lost = new Map<string, ContentMark>();
  for (const mark of await host.seen.abandoned(workflow.name, host.nowMs())) {
    const run = host.store.findRunByTriggerHash(workflow.name, `sha256:${mark.hash}`);
    if (run && run.status !== 'running' && run.status !== 'waiting') {
      await host.seen.finish(workflow.name, mark.hash, { runId: run.id, path: mark.path, succeeded: run.status === 'succeeded' }, host.nowMs());
    } else if (!run) lost.set(mark.hash, mark);
    // An unfinished run that resumeInterruptedRuns did not take belongs to a live runner.
  }
  if (workflow.on.watch?.claim === 'move') {
    for (const base of trigger.bases) await sweepProcessing(host, workflow, trigger, claimRootFor(base, host.config.dir), lost);
  }
  for (const [hash, mark] of lost) {
    await host.seen.forget(workflow.name, hash);
    if (!(await exists(mark.path))) continue; // gone: nothing left to run
    host.emit({ type: 'recovered', workflow: workflow.name, action: 'triggered', path: mark.path, reason: 'its runner stopped before the run started' });
    trigger.retrigger(mark.path);
  }
}

/** Files in one `processing/` folder: released when their run ended, put back when none started. */
async function sweepProcessing(host: RecoveryHost, workflow: Workflow, trigger: FileTrigger, root: string, lost: Map<string, ContentMark>): Promise<void> {
  const folder = join(root, 'processing');
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    const path = join(folder, name);
    try {
      const hash = await hashFile(path);
      const run = host.store.findRunByTriggerHash(workflow.name, `sha256:${hash}`);
      if (run?.status === 'running' || run?.status === 'waiting') continue; // resumed now, waiting, or a live runner's: its own finish moves the file
      if (run) {
        const movedTo = await releaseClaim(path, run.status === 'succeeded' ? 'done' : 'failed');
        host.emit({ type: 'recovered', workflow: workflow.name, runId: run.id, action: 'released', path, reason: `its run had ${run.status}; moved to ${movedTo}` });
        continue;
      }
      const mark = lost.get(hash);
      if (!mark) {
        const current = await host.seen.peek(workflow.name, hash);
        if (current?.status === 'running') continue; // a live runner claimed it a moment ago
      }
      lost.delete(hash);
      await host.seen.forget(workflow.name, hash);
      const source = mark?.path ?? join(trigger.bases[0] ?? root, name);
      await rename(path, source);
      host.emit({ type: 'recovered', workflow: workflow.name, action: 'triggered', path: source, reason: 'it was claimed, but its runner stopped before the run started; put back' });
      trigger.retrigger(source);
    } catch (error) {
      host.emit({ type: 'warning', workflow: workflow.name, message: `left in ${folder}: ${name} (${messageOf(error)})` });
    }
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
