import { defineConfig } from 'vitest/config';

// Test files that replace a module (vi.mock): they need a module graph of their own.
const MOCKING = ['test/unit/move-file.test.ts', 'test/unit/spool-disk-full.test.ts'];

export default defineConfig({
  test: {
    setupFiles: ['test/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: integration tests spawn real servers, so keep parallelism modest.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        // Unit tests share one module graph per worker: loading the sources again for each of ~45
        // files cost more than the tests themselves (measured: 110-126 s of wall time against 52-62 s).
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], exclude: MOCKING, isolate: false },
      },
      {
        extends: true,
        test: { name: 'isolated', include: ['test/integration/**/*.test.ts', ...MOCKING] },
      },
    ],
  },
});
