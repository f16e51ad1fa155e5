import type { RunPlan } from '../scheduler/plan.js';

/** The dry-run plan as text: one block per parallel group. */
export function formatPlan(plan: RunPlan): string {
  const lines: string[] = [`plan for ${plan.workflow} (nothing was called)`];
  for (const [name, app] of Object.entries(plan.apps)) {
    lines.push(app.error ? `  app ${name}: unavailable: ${app.error}` : `  app ${name}: ${app.server?.name ?? '?'} ${app.server?.version ?? ''} protocol ${app.protocolVersion ?? '?'}`);
  }
  const byId = new Map(plan.steps.map((step) => [step.id, step]));
  plan.levels.forEach((ids, level) => {
    lines.push(`group ${level + 1}${ids.length > 1 ? ` (${ids.length} in parallel)` : ''}:`);
    for (const id of ids) {
      const step = byId.get(id)!;
      const policy = step.policy ? `${step.policy.action} (${step.policy.reason})` : 'unknown';
      const retry = step.retry.attempts > 1 ? `${step.retry.attempts} attempts, ` : '';
      lines.push(`  ${step.id}  ${step.uses}${step.foreach ? ' (foreach)' : ''}`);
      lines.push(`      policy: ${policy}; retry: ${retry}${step.retry.safe ? 'safe' : 'unsafe'} (${step.retry.why})`);
      for (const problem of step.problems) lines.push(`      problem: ${problem}`);
    }
  });
  return lines.join('\n') + '\n';
}
