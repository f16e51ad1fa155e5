// runner.lock: what the tools a project's workflows call looked like when they were reviewed, and the check a run makes against it.
export { LOCK_VERSION, SEVERITY_ORDER, type Drift, type DriftSeverity, type LockFile, type LockedApp, type LockedTool, type PinnedFields, type UsedTools } from './types.js';
export { canonicalJson, hashPinnedFields, MAX_PINNED_TOOL_BYTES, pinTool, type ListedTool } from './pin.js';
export { lockEntriesFor, mergeLock, usedTools, type LiveApp } from './entries.js';
export { compareTool, compareWithLock, sortDrifts } from './compare.js';
export { formatDrift, MAX_SHOWN_VALUE_CHARS, showValue } from './format.js';
export { LOCK_FILE_NAME, lockFilePath, readLockFile, serializeLock, writeLockFile } from './lock-file.js';
export { readLiveApps, reachedApps } from './live-apps.js';
export { assertNoLockDrift, driftWarning, findLockDrift, lockDriftError, type LockCheck } from './check.js';
export { planLock, type LockPlan } from './plan-lock.js';
export { createToolCheck, type ToolCheck } from './guard.js';
