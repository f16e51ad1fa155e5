import type { Tool } from '@modelcontextprotocol/client';
import type { PolicyAction, PolicyConfig } from '../config/types.js';

/** A tool's hints with the MCP spec's defaults filled in for missing ones. */
export interface ToolHints {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  openWorld: boolean;
}

/**
 * Reads a tool's annotations with the spec's defaults: not read-only,
 * destructive, not idempotent, open-world. destructiveHint and idempotentHint
 * only mean something when the tool is not read-only.
 */
export function readToolHints(tool: Pick<Tool, 'annotations'>): ToolHints {
  const annotations = tool.annotations ?? {};
  const readOnly = annotations.readOnlyHint ?? false;
  return {
    readOnly,
    destructive: readOnly ? false : (annotations.destructiveHint ?? true),
    idempotent: readOnly ? true : (annotations.idempotentHint ?? false),
    openWorld: annotations.openWorldHint ?? true,
  };
}

export interface PolicyDecision {
  action: PolicyAction;
  /** What decided it: `rule <glob>` or the annotation classes that applied. */
  reason: string;
}

const strictness: Record<PolicyAction, number> = { allow: 0, ask: 1, deny: 2 };

/** The stricter of two actions (deny > ask > allow). */
export function stricterOf(a: PolicyAction, b: PolicyAction): PolicyAction {
  return strictness[a] >= strictness[b] ? a : b;
}

/**
 * The policy decision for calling `app.tool`: its first matching rule, else
 * the stricter of its class (read-only, destructive or other) and, for an
 * open-world tool, the `open-world` gate. Rules win because hints can lie.
 */
export function decidePolicy(qualifiedName: string, hints: ToolHints, policy: PolicyConfig): PolicyDecision {
  for (const rule of policy.rules) {
    if (matchesGlob(rule.match, qualifiedName)) return { action: rule.action, reason: `rule ${rule.match}` };
  }
  const cls = hints.readOnly ? 'read-only' : hints.destructive ? 'destructive' : 'other';
  let action = hints.readOnly ? policy.readOnly : hints.destructive ? policy.destructive : policy.other;
  let reason = cls;
  if (hints.openWorld) {
    const gated = stricterOf(action, policy.openWorld);
    if (gated !== action) reason = `${cls}, open-world`;
    action = gated;
  }
  return { action, reason };
}

/**
 * Changes an `ask` into allow or deny when nobody can be asked; with
 * `headless: 'wait'` it stays `ask`: the step waits for `runner approve`.
 */
export function resolveAsk(
  qualifiedName: string,
  decision: PolicyDecision,
  options: { yes: boolean; allow: readonly string[]; interactive: boolean; headless?: 'deny' | 'wait' },
): PolicyDecision | 'prompt' {
  if (decision.action !== 'ask') return decision;
  if (options.yes) return { action: 'allow', reason: `${decision.reason}; --yes` };
  const glob = options.allow.find((pattern) => matchesGlob(pattern, qualifiedName));
  if (glob) return { action: 'allow', reason: `${decision.reason}; --allow ${glob}` };
  if (options.interactive) return 'prompt';
  if (options.headless === 'wait') return { action: 'ask', reason: `${decision.reason}; waits for \`runner approve\` (headless-ask: wait)` };
  return { action: 'deny', reason: `${decision.reason}; ask without a TTY` };
}

/** The `policy.rules` entry that allows `app.tool`, as it is written in runner.config.yaml. */
export function allowRuleFor(qualifiedName: string): string {
  return `- { match: "${qualifiedName}", action: allow }`;
}

/**
 * What a user can do about a denial, from its reason: for an ask nobody could
 * answer, `--yes`, `--allow` or a rule; for a class that denies, a rule; for a
 * rule that denies, that rule; for an approval that expired, `--yes` on resume.
 * Undefined when a person refused (at the prompt, or with `runner deny`).
 */
export function describeRemedy(qualifiedName: string, reason: string): string | undefined {
  if (reason.endsWith('refused at the prompt') || reason.includes('; denied by ')) return undefined;
  const rule = `add \`${allowRuleFor(qualifiedName)}\` under policy.rules in runner.config.yaml`;
  if (reason.includes('; approval expired')) return `to allow it, resume with --yes or --allow ${qualifiedName}, or answer within \`policy.approval-timeout\` next time`;
  if (reason.endsWith('ask without a TTY')) return `to allow it, run with --yes or --allow ${qualifiedName}, or ${rule}`;
  if (reason.startsWith('rule ')) return `to allow it, change the rule \`${reason.slice('rule '.length)}\` in policy.rules (the first matching rule decides)`;
  return `to allow it, ${rule}`;
}

const globCache = new Map<string, RegExp>();

/** Glob on `app.tool`: `*` matches any run of characters, `?` exactly one. */
export function matchesGlob(glob: string, name: string): boolean {
  let regex = globCache.get(glob);
  if (!regex) {
    const source = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*').replaceAll('?', '.');
    regex = new RegExp(`^${source}$`);
    globCache.set(glob, regex);
  }
  return regex.test(name);
}
