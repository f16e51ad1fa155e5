import type { Tool } from '@modelcontextprotocol/client';
import type { AppRegistry } from '../apps/registry.js';
import { CallError } from '../apps/call-error.js';
import type { PolicyAction, RunnerConfig } from '../config/types.js';
import { planLevels } from '../workflow/graph.js';
import type { Workflow } from '../workflow/types.js';
import type { PolicyOverrides } from './events.js';
import { decidePolicy, readToolHints, resolveAsk, type ToolHints } from './policy.js';
import { mergeRetry } from './retry.js';
import { checkLiteralArguments } from './validate-args.js';

export interface PlannedStep {
  id: string;
  uses: string;
  level: number;
  needs: string[];
  foreach: boolean;
  hints: ToolHints | null;
  policy: { action: PolicyAction; reason: string } | null;
  retry: { attempts: number; safe: boolean; why: string };
  /** Why the step could not be planned (app down, no such tool, bad literal arguments). */
  problems: string[];
}

export interface RunPlan {
  workflow: string;
  levels: string[][];
  steps: PlannedStep[];
  apps: Record<string, { protocolVersion: string | undefined; server: { name: string; version: string } | undefined; error?: string }>;
}

/**
 * The dry-run plan: order, parallel groups, and for each step the policy
 * decision and whether a retry would be safe. Connects to the apps and reads
 * their tools; calls none.
 */
export async function planRun(
  workflow: Workflow,
  config: RunnerConfig,
  apps: AppRegistry,
  policy: PolicyOverrides,
  options: { /** A real run would prompt for `ask` calls (stdin and stderr are a TTY). */ interactive?: boolean } = {},
): Promise<RunPlan> {
  const levels = planLevels(workflow.steps);
  const levelOf = new Map<string, number>();
  levels.forEach((ids, level) => ids.forEach((id) => levelOf.set(id, level)));
  const appNames = [...new Set(workflow.steps.map((step) => step.app))];
  const tools = new Map<string, Map<string, Tool> | Error>();
  await Promise.all(
    appNames.map(async (name) => {
      try {
        const connection = await apps.get(name);
        tools.set(name, new Map((await connection.listTools()).map((tool) => [tool.name, tool])));
      } catch (error) {
        tools.set(name, error instanceof Error ? error : new Error(String(error)));
      }
    }),
  );
  const retryBase = mergeRetry(config.retry, workflow.defaults.retry);
  const steps = workflow.steps.map((step): PlannedStep => {
    const retry = mergeRetry(retryBase, step.retry);
    const planned: PlannedStep = {
      id: step.id,
      uses: step.uses,
      level: levelOf.get(step.id) ?? 0,
      needs: step.needs,
      foreach: step.foreach !== undefined,
      hints: null,
      policy: null,
      retry: { attempts: retry.attempts, safe: false, why: '' },
      problems: [],
    };
    const catalog = tools.get(step.app);
    if (catalog instanceof Error) {
      planned.problems.push(catalog.message);
      return planned;
    }
    const tool = catalog?.get(step.tool);
    if (!tool) {
      planned.problems.push(new CallError('unavailable', `app \`${step.app}\` has no tool \`${step.tool}\` (tools: ${[...(catalog?.keys() ?? [])].join(', ')})`).message);
      return planned;
    }
    const hints = readToolHints(tool);
    planned.hints = hints;
    const decision = decidePolicy(step.uses, hints, config.policy);
    const resolved = resolveAsk(step.uses, decision, { yes: policy.yes, allow: policy.allow, interactive: Boolean(options.interactive) });
    planned.policy = resolved === 'prompt' ? { action: 'ask', reason: `${decision.reason}; will prompt` } : resolved;
    planned.retry = describeRetrySafety(hints, retry.unsafe, retry.attempts);
    planned.problems.push(...checkLiteralArguments(tool, step.with));
    return planned;
  });
  const appsInfo: RunPlan['apps'] = {};
  for (const name of appNames) {
    const info = apps.infos.get(name);
    const catalog = tools.get(name);
    appsInfo[name] = {
      protocolVersion: info?.protocolVersion,
      server: info?.server,
      ...(catalog instanceof Error ? { error: catalog.message } : {}),
    };
  }
  return { workflow: workflow.name, levels, steps, apps: appsInfo };
}

function describeRetrySafety(hints: ToolHints, unsafe: boolean, attempts: number): PlannedStep['retry'] {
  if (hints.readOnly) return { attempts, safe: true, why: 'read-only' };
  if (hints.idempotent) return { attempts, safe: true, why: 'idempotent' };
  if (unsafe) return { attempts, safe: true, why: 'retry.unsafe: true' };
  return { attempts, safe: false, why: 'not idempotent: retried only when the request never reached the app' };
}
