import type { Diagnostic, SourceLocation } from '../errors.js';
import type { RetryOverrides } from '../config/types.js';

/** A JSON value as written in YAML: strings may hold `${{ }}` expressions. */
export type TemplateValue = null | boolean | number | string | TemplateValue[] | { [key: string]: TemplateValue };

export type InputType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object';

export interface InputSpec {
  type: InputType;
  default?: unknown;
  required: boolean;
  description?: string;
  location?: SourceLocation;
}

export type WatchEvent = 'add' | 'change' | 'unlink';

export interface WatchTrigger {
  /** Globs relative to the config folder. */
  paths: string[];
  events: WatchEvent[];
  debounceMs: number;
  claim?: 'move';
  location?: SourceLocation;
}

export interface ScheduleTrigger {
  cron: string;
  timezone?: string;
  overlap: 'skip' | 'queue' | 'allow';
  catchUp: 'one' | 'none';
  location?: SourceLocation;
}

export interface Step {
  id: string;
  /** `<app>.<tool>` exactly as written. */
  uses: string;
  app: string;
  tool: string;
  /** Arguments, unevaluated. */
  with: { [key: string]: TemplateValue };
  /** Explicit `needs` plus steps referenced through `steps.X` anywhere in the step. Sorted, unique. */
  needs: string[];
  /** Of `needs`, the ones written under the step's `needs:` key (the rest are read in expressions). Sorted, unique. */
  declaredNeeds?: string[];
  /** Condition expression text (without `${{ }}`), if any. */
  if?: string;
  /** The foreach value, unevaluated (usually one `${{ }}` string, or a literal array). */
  foreach?: TemplateValue;
  retry?: RetryOverrides;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  continueOnError: boolean;
  /** With foreach: the most items allowed (`max-items`). */
  maxItems?: number;
  /** Answers for elicitation, field → value. */
  elicit?: { [key: string]: TemplateValue };
  /** Where the step starts (its `- id:` item). */
  location: SourceLocation;
}

/** A workflow file after parsing, validation and normalization. */
export interface Workflow {
  /** Absolute path of the file. */
  file: string;
  name: string;
  description?: string;
  on: { watch?: WatchTrigger; schedule: ScheduleTrigger[] };
  inputs: Record<string, InputSpec>;
  concurrency?: number;
  timeoutMs?: number;
  defaults: { timeoutMs?: number; retry?: RetryOverrides };
  /** In file order. */
  steps: Step[];
  location: SourceLocation;
  /** Problems that stop nothing (an unset `env.X`, `{{ }}` without `$`), for the CLI to print; set by the loader. */
  warnings?: Diagnostic[];
}
