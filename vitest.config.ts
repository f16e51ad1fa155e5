import { defineConfig } from 'vitest/config';

// Test files that replace a module (vi.mock), or change V8's flags (bench-gc exposes `gc`, which the
// compiled-code tests would see in the shared workers): they need a process of their own.
const OWN_PROCESS = ['test/unit/move-file.test.ts', 'test/unit/spool-disk-full.test.ts', 'test/unit/bench-gc.test.ts'];

export default defineConfig({
  test: {
    setupFiles: ['test/setup.ts'],
    // The run's one temp folder (TMPDIR, removed at the end) and the fixture apps' startup snapshots (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // The built runner (dist/) loads as Node loads it, not through vite's module runner: the in-process
    // CLI tests import it, and transforming its 300 modules cost each worker time for nothing.
    server: { deps: { external: [/\/dist\//] } },
    // Test and source files as vite transformed them are kept on disk between runs
    // (node_modules/.experimental-vitest-cache), keyed by their content.
    experimental: { fsModuleCache: true },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: integration tests spawn real servers, so keep parallelism modest.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        // Test files share one module graph per worker: loading the sources, the built CLI and the SDK
        // again for each file cost more than many files' tests. Measured under load: test/unit 110-126 s
        // isolated against 52-62 s shared; twelve integration files 120 s against 77 s.
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: OWN_PROCESS, isolate: false },
      },
      {
        extends: true,
        test: { name: 'isolated', include: OWN_PROCESS },
      },
    ],
  },
});
