// The programmatic API: what `runner` does from the command line, as functions.
// The CLI is a thin skin over these; everything here is also what it uses.

export { runOnce, loadRun, type RunnerContext, type RunOnceOptions } from './runner.js';
export { loadConfig, findConfigFile, type LoadConfigOptions } from './config/load.js';
export type { RunnerConfig, AppConfig, PolicyConfig, RetryPolicy, RetentionPolicy, FailureKind } from './config/types.js';
export { loadWorkflow } from './workflow/load.js';
export type { Workflow, Step } from './workflow/types.js';
export { executeRun, type ExecuteRunOptions } from './scheduler/executor.js';
export type { RunEvent, PolicyOverrides, Approver, FieldsPrompter } from './scheduler/events.js';
export type { RunRecord, StepRecord, ItemRecord, RunStatus, StepStatus, StepErrorRecord } from './artifacts/run-record.js';
export { openRunStore, withRunStore, findRun, displayRecord } from './store/run-history.js';
export type { RunStore, RunSummary, RunFilter, StoredRun } from './store/run-store.js';
export { selectRunsToPrune, deleteRuns, type PruneOptions } from './store/prune.js';
export { writeRunReport, REPORT_FILE } from './report/html/write-report.js';
export { RunnerError, ExitCode, exitCodeFor, formatDiagnostic, type Diagnostic, type RunnerErrorCode } from './errors.js';
export {
  readLockFile,
  lockFilePath,
  usedTools,
  lockEntriesFor,
  compareWithLock,
  formatDrift,
  findLockDrift,
  type Drift,
  type DriftSeverity,
  type LockFile,
  type LockCheck,
} from './lock/index.js';
