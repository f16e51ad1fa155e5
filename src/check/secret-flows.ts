// Where each secret of a config can go: the apps that receive it from the
// config itself (an app's env, args, url or headers, or its `auth:` credentials,
// which go to the authorization server), and the steps whose arguments can
// carry it, followed through expressions. Static: nothing is evaluated and
// no value is ever part of the answer, only names and places.
import { authSecretValues } from '../config/normalize-auth.js';
import type { AppConfig, RunnerConfig, SecretEntry } from '../config/types.js';
import type { SourceLocation } from '../errors.js';
import { locateInWorkflow } from '../workflow/load.js';
import { collectStepReads } from '../workflow/step-reads.js';
import type { Step, TemplateValue, Workflow } from '../workflow/types.js';

/** How an app gets a secret from the config. */
export interface AppSecretFlow {
  app: string;
  /** `env`, `args` and `url`/`headers` reach the app itself; `auth` goes to its authorization server. */
  via: 'env' | 'args' | 'url' | 'headers' | 'auth';
  /** The env or header name, the args index, or the `auth:` key. */
  key: string | number | null;
}

/** A step whose arguments can carry a secret when it runs. */
export interface StepSecretFlow {
  workflow: string;
  step: string;
  uses: string;
  /** What brings it: `env.NAME`, `env` read as a whole or by a computed name, `steps.<id>` (a step that can carry it), or `literal`. */
  through: string[];
  /** Where the first such read is written. */
  location: SourceLocation;
}

/** Everything known about one secret. */
export interface SecretFlows {
  /** The env name it comes from (an `auth:` secret written literally gets a made-up RUNNER_AUTH_ name). */
  name: string;
  apps: AppSecretFlow[];
  steps: StepSecretFlow[];
}

/** The keys of a step whose values are sent: `if` is evaluated by the runner and never leaves it. */
const SENT_KEYS = new Set(['with', 'foreach', 'elicit']);
const FLOW_CONTEXTS: ReadonlySet<string> = new Set(['env', 'steps']);

/** Every secret of the config with where it can flow in the config's apps and in the given workflows. */
export function traceSecretFlows(config: RunnerConfig, workflows: readonly Workflow[]): SecretFlows[] {
  const byName = new Map<string, SecretEntry[]>();
  for (const entry of config.secretEntries) byName.set(entry.name, [...(byName.get(entry.name) ?? []), entry]);
  // A name in `secrets:` that is unset still names a secret that a workflow can read as `env.NAME`.
  for (const name of config.secrets) if (!byName.has(name)) byName.set(name, []);
  return [...byName]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, entries]) => ({
      name,
      apps: Object.values(config.apps).flatMap((app) => appFlows(app, entries.map((entry) => entry.value))),
      steps: workflows.flatMap((workflow) => stepFlows(workflow, name, entries.map((entry) => entry.value))),
    }));
}

function appFlows(app: AppConfig, values: string[]): AppSecretFlow[] {
  const holds = (text: string) => values.some((value) => value !== '' && text.includes(value));
  const flows: AppSecretFlow[] = [];
  if (app.transport === 'stdio') {
    for (const [key, value] of Object.entries(app.env)) if (holds(value)) flows.push({ app: app.name, via: 'env', key });
    app.args.forEach((arg, index) => holds(arg) && flows.push({ app: app.name, via: 'args', key: index }));
    return flows;
  }
  if (holds(app.url)) flows.push({ app: app.name, via: 'url', key: null });
  for (const [key, value] of Object.entries(app.headers)) if (holds(value)) flows.push({ app: app.name, via: 'headers', key });
  if (app.auth) for (const [key, value] of Object.entries(authSecretValues(app.auth))) if (value !== undefined && holds(value)) flows.push({ app: app.name, via: 'auth', key });
  return flows;
}

/**
 * The steps of one workflow whose arguments can carry the secret `name`: a
 * step that reads `env.NAME` (or all of `env`, or `env[...]` by a computed
 * name), that has its value written literally, or that reads anything of a
 * step that can carry it (a tool can answer with what it was given; a
 * `runner.transform` certainly does). Followed in file order until nothing
 * changes, so a step reading a later step is caught as well.
 */
function stepFlows(workflow: Workflow, name: string, values: string[]): StepSecretFlow[] {
  const lowerName = name.toLowerCase();
  const carrying = new Map<string, StepSecretFlow>();
  const readsOf = workflow.steps.map((step, index) => collectStepReads(step, index, FLOW_CONTEXTS).filter((read) => SENT_KEYS.has(String(read.path[2]))));
  let changed = true;
  while (changed) {
    changed = false;
    workflow.steps.forEach((step, index) => {
      if (carrying.has(step.id)) return;
      const through: string[] = [];
      let location: SourceLocation | undefined;
      for (const read of readsOf[index]) {
        const [first] = read.access.path;
        let label: string | undefined;
        if (read.access.context === 'env') {
          if (first === undefined) label = 'env';
          else if (first === null) label = 'env[…]';
          else if (String(first).toLowerCase() === lowerName) label = `env.${name}`;
        } else if (typeof first === 'string' && carrying.has(first)) {
          label = `steps.${first}`;
        }
        if (label === undefined) continue;
        if (!through.includes(label)) through.push(label);
        location ??= locateInWorkflow(workflow, read.path, { value: read.value, offset: read.offset });
      }
      const literal = findLiteral(step, index, values);
      if (literal) {
        through.push('literal');
        location ??= locateInWorkflow(workflow, literal);
      }
      if (through.length === 0) return;
      carrying.set(step.id, { workflow: workflow.name, step: step.id, uses: step.uses, through, location: location! });
      changed = true;
    });
  }
  return workflow.steps.flatMap((step) => carrying.get(step.id) ?? []);
}

/** The path of the first sent value of the step that has a secret's value written in it. */
function findLiteral(step: Step, index: number, values: string[]): (string | number)[] | undefined {
  if (values.every((value) => value === '')) return undefined;
  const visit = (value: TemplateValue | undefined, path: (string | number)[]): (string | number)[] | undefined => {
    if (typeof value === 'string') return values.some((secret) => secret !== '' && value.includes(secret)) ? path : undefined;
    if (Array.isArray(value)) {
      for (const [i, entry] of value.entries()) {
        const found = visit(entry, [...path, i]);
        if (found) return found;
      }
    } else if (value !== null && typeof value === 'object') {
      for (const [key, entry] of Object.entries(value)) {
        const found = visit(entry, [...path, key]);
        if (found) return found;
      }
    }
    return undefined;
  };
  const at = (key: string) => ['steps', index, key];
  return visit(step.with, at('with')) ?? visit(step.foreach, at('foreach')) ?? visit(step.elicit, at('elicit'));
}

