import { formatLocation, type Diagnostic, type SourceLocation } from '../errors.js';
import type { UnusableApp } from './types.js';

/**
 * The error for a workflow step that uses an imported server runner cannot
 * use: positioned at the server in the imported file (what to fix), naming
 * the step that uses it.
 */
export function diagnoseUnusableAppUse(app: UnusableApp, use: { uses: string; stepId: string; location: SourceLocation }): Diagnostic {
  const step = use.stepId ? ` of step \`${use.stepId}\`` : '';
  return {
    location: app.location,
    message: `app \`${app.name}\` cannot be used: ${app.reasons.join('; ')} (needed by \`uses: ${use.uses}\`${step} at ${formatLocation(use.location)})`,
    ...(app.hint && { hint: app.hint }),
  };
}
