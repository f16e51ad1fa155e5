// `runner check`: an audit of workflows before anything runs, from the
// config, the workflows and the live tool lists. Connects to the apps and
// reads their tools; calls none.
import type { Tool } from '@modelcontextprotocol/client';
import type { AppRegistry } from '../apps/registry.js';
import { BUILTIN_APP } from '../builtins/catalog.js';
import type { PolicyAction, RunnerConfig } from '../config/types.js';
import type { SourceLocation } from '../errors.js';
import { findLockDrift, lockFilePath, type Drift } from '../lock/index.js';
import { planRun } from '../scheduler/plan.js';
import { decidePolicy, type ToolHints } from '../scheduler/policy.js';
import type { Workflow } from '../workflow/types.js';
import { traceSecretFlows, type SecretFlows } from './secret-flows.js';

/** What decided a step's policy: the first matching rule, or the tool's annotation class (and the open-world gate). */
export interface PolicyVerdict {
  action: PolicyAction;
  /** As `runner tools` and `--dry-run` say it: `rule <glob>`, `destructive`, `other, open-world`, `built-in`. */
  reason: string;
  /** The `policy.rules` glob that matched; null when the class decided. */
  rule: string | null;
  /** The annotation class; null when a rule decided. */
  class: 'read-only' | 'destructive' | 'other' | 'built-in' | null;
}

/** One step as the audit sees it. */
export interface CheckedStep {
  id: string;
  uses: string;
  app: string;
  tool: string;
  /** The tool's annotations as its server lists them; null when the tool could not be read. */
  annotations: NonNullable<Tool['annotations']> | null;
  /** The annotations with the MCP spec's defaults filled in. */
  hints: ToolHints | null;
  /** The config's decision for this call; null when the tool could not be read. */
  policy: PolicyVerdict | null;
  /** What an `ask` does where nobody is at a terminal (watch, cron, serve, CI): `deny`, or `wait` for `runner approve` (`policy.headless-ask`); null for allow and deny. */
  headless: 'deny' | 'wait' | null;
  destructive: boolean;
  openWorld: boolean;
  /** The step would be refused: its decision is deny, or it asks, the workflow runs on a trigger, where nobody can answer, and `headless-ask` is `deny`. */
  denied: boolean;
  /** Why the step could not be audited or would fail before sending (no such app or tool, bad arguments), each positioned. */
  problems: string[];
  location: SourceLocation;
}

export interface CheckedWorkflow {
  file: string;
  name: string;
  /** It runs on `on.watch` or `on.schedule`, where an `ask` has no terminal. */
  triggered: boolean;
  apps: Record<string, { protocolVersion: string | null; server: { name: string; version: string } | null; error: string | null }>;
  steps: CheckedStep[];
}

/** What `runner check --json` prints. */
export interface CheckReport {
  /** False when a step would be refused, could not be audited, or a tool changed since the lock was written: exit 1. */
  ok: boolean;
  workflows: CheckedWorkflow[];
  secrets: SecretFlows[];
  /** `workflow/step` of every step that would be refused. */
  denied: string[];
  destructive: string[];
  openWorld: string[];
  /** `workflow/step` of every step with a problem. */
  problems: string[];
  /** The lockfile (runner.lock beside the config) and how the tools the workflows call differ from it, worst first. */
  lock: { file: string; present: boolean; drifts: Drift[] };
}

/** Audits the workflows against the live apps (connected through `apps`, which the caller closes). */
export async function auditWorkflows(config: RunnerConfig, workflows: readonly Workflow[], apps: AppRegistry): Promise<CheckReport> {
  const checked: CheckedWorkflow[] = [];
  for (const workflow of workflows) checked.push(await auditWorkflow(config, workflow, apps));
  const all = checked.flatMap((workflow) => workflow.steps.map((step) => ({ name: `${workflow.name}/${step.id}`, step })));
  const names = (keep: (step: CheckedStep) => boolean) => all.filter(({ step }) => keep(step)).map(({ name }) => name);
  const report: CheckReport = {
    ok: true,
    workflows: checked,
    secrets: traceSecretFlows(config, workflows),
    denied: names((step) => step.denied),
    destructive: names((step) => step.destructive),
    openWorld: names((step) => step.openWorld),
    problems: names((step) => step.problems.length > 0),
    lock: { file: lockFilePath(config), present: false, drifts: [] },
  };
  // The tools are listed already: comparing them with the lock costs no round trip.
  const lock = await findLockDrift({ config, workflows, apps });
  if (lock) report.lock = { file: lock.file, present: true, drifts: lock.drifts };
  report.ok = report.denied.length === 0 && report.problems.length === 0 && !report.lock.drifts.some((drift) => drift.stops);
  return report;
}

async function auditWorkflow(config: RunnerConfig, workflow: Workflow, apps: AppRegistry): Promise<CheckedWorkflow> {
  // The plan connects, reads the tools, and finds what would stop a step before it is sent.
  const plan = await planRun(workflow, config, apps, { yes: false, allow: [] });
  const triggered = workflow.on.watch !== undefined || workflow.on.schedule.length > 0;
  const steps = await Promise.all(
    workflow.steps.map(async (step, index): Promise<CheckedStep> => {
      const planned = plan.steps[index];
      const tool = planned.hints ? await toolOf(apps, step.app, step.tool) : undefined;
      const hints = planned.hints;
      const policy = hints ? verdictFor(step.uses, step.app, hints, config) : null;
      // Without a terminal, `--yes` or `--allow`, an `ask` is refused, or waits for `runner approve` (`headless-ask: wait`).
      const headless = policy?.action === 'ask' ? config.policy.headlessAsk : null;
      return {
        id: step.id,
        uses: step.uses,
        app: step.app,
        tool: step.tool,
        annotations: hints ? (tool?.annotations ?? {}) : null,
        hints,
        policy,
        headless,
        destructive: hints?.destructive ?? false,
        openWorld: step.app !== BUILTIN_APP && (hints?.openWorld ?? false),
        denied: policy?.action === 'deny' || (triggered && headless === 'deny'),
        problems: planned.problems,
        location: step.location,
      };
    }),
  );
  const appInfo: CheckedWorkflow['apps'] = {};
  for (const [name, info] of Object.entries(plan.apps)) {
    appInfo[name] = { protocolVersion: info.protocolVersion ?? null, server: info.server ?? null, error: info.error ?? null };
  }
  return { file: workflow.file, name: workflow.name, triggered, apps: appInfo, steps };
}

async function toolOf(apps: AppRegistry, app: string, name: string): Promise<Tool | undefined> {
  if (app === BUILTIN_APP) return undefined;
  // Already listed by the plan: the connection keeps its tool list.
  return (await apps.get(app)).getTool(name);
}

function verdictFor(uses: string, app: string, hints: ToolHints, config: RunnerConfig): PolicyVerdict {
  if (app === BUILTIN_APP) return { action: 'allow', reason: 'built-in', rule: null, class: 'built-in' };
  const decision = decidePolicy(uses, hints, config.policy);
  const rule = decision.reason.startsWith('rule ') ? decision.reason.slice('rule '.length) : null;
  const cls = hints.readOnly ? 'read-only' : hints.destructive ? 'destructive' : 'other';
  return { action: decision.action, reason: decision.reason, rule, class: rule === null ? cls : null };
}
