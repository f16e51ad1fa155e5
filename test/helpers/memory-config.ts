import type { RunnerConfig } from '../../src/config/types.js';

/**
 * A config for engine tests whose one app, `mem`, is served in memory (the
 * test hands the AppRegistry a `connectTransport`): artifacts in `artifacts`,
 * one attempt per call, the default policy with `policy` over it.
 */
export function memoryConfig(artifacts: string, options: { policy?: Partial<RunnerConfig['policy']>; secretValues?: string[] } = {}): RunnerConfig {
  return {
    file: null,
    dir: artifacts,
    artifacts,
    concurrency: 4,
    apps: { mem: { name: 'mem', transport: 'stdio', command: 'unused', args: [], env: {}, cwd: artifacts, roots: false } },
    retry: { attempts: 1, delayMs: 10, backoff: 2, maxDelayMs: 100, on: ['transport', 'timeout', 'protocol'], unsafe: false },
    policy: { readOnly: 'allow', destructive: 'ask', other: 'allow', openWorld: 'allow', headlessAsk: 'deny', approvalTimeoutMs: 86_400_000, rules: [], ...options.policy },
    secrets: [],
    secretValues: options.secretValues ?? [],
    secretEntries: [],
    retention: {},
    warnings: [],
  };
}
