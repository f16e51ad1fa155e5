// A vitest reporter for scripts/suite-cpu.mjs: when each test file was queued
// on a worker (its imports and hooks count from there, where vitest's JSON
// report starts a file at its first test) and when it ended, written as JSON
// to the file named by RUNNER_SUITE_CPU_FILES when the run ends.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

export default class SuiteCpuReporter {
  windows = new Map();

  onTestModuleQueued(testModule) {
    this.windows.set(testModule.moduleId, { start: Date.now(), end: undefined });
  }

  onTestModuleEnd(testModule) {
    const window = this.windows.get(testModule.moduleId) ?? { start: Date.now() };
    window.end = Date.now();
    this.windows.set(testModule.moduleId, window);
  }

  onTestRunEnd() {
    const file = process.env.RUNNER_SUITE_CPU_FILES;
    if (!file) return;
    const files = [...this.windows].map(([id, { start, end }]) => ({ name: relative('test', relative(process.cwd(), id)), start, end: end ?? Date.now() }));
    writeFileSync(file, `${JSON.stringify(files)}\n`);
  }
}
