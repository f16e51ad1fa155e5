// What every part of loading one workflow file shares: its source, raw data, config and diagnostics.
import type { Diagnostic } from '../errors.js';
import type { PathNames } from '../config/schema-diagnostics.js';
import type { RunnerConfig } from '../config/types.js';
import type { YamlSource } from '../config/yaml-source.js';
import type { RawWorkflow } from './schema.js';

/** One workflow file being loaded: problems are collected in `diagnostics`, never thrown one by one. */
export interface LoadContext {
  source: YamlSource;
  raw: RawWorkflow;
  config: RunnerConfig;
  /** Errors and warnings (`severity: 'warning'`). */
  diagnostics: Diagnostic[];
  /** Declared inputs by lower-case name, for `inputs.X` in expressions. */
  inputNames: ReadonlyMap<string, string>;
  /** The environment `env.X` is checked against; undefined: not checked. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Names things in a workflow for messages: "step `logo`", "input `company`". */
export const WORKFLOW_NAMES: PathNames = {
  root: 'the workflow',
  owner(path, data) {
    if (path.length < 2) return undefined;
    if (path[0] === 'inputs') return { label: `input \`${String(path[1])}\``, length: 2 };
    if (path[0] !== 'steps' || typeof path[1] !== 'number') return undefined;
    const id = (data as { steps?: { id?: unknown }[] } | undefined)?.steps?.[path[1]]?.id;
    return { label: typeof id === 'string' ? `step \`${id}\`` : `step #${path[1] + 1}`, length: 2 };
  },
};
