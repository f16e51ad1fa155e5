// Verdicts and the table of scripts/conformance.mjs: pure functions of what a
// suite run left behind.

const REASON_COLUMN_CHARS = 110;

/**
 * A scenario's verdict and why: the suite's exit code decides (it counts
 * failed checks, warnings, a timeout and the client's exit code); the reason
 * is the first failing check, then the client's own `…-client: why` line.
 */
export function summarize({ code, killed, suiteOutput, checks, clientStderr }) {
  const passed = code === 0 && !killed;
  const failures = checks.filter((check) => check.status === 'FAILURE');
  const warnings = checks.filter((check) => check.status === 'WARNING');
  const said = clientStderr
    .split('\n')
    .filter((line) => /^(runner|raw)-client: /.test(line) && !line.includes('workspace kept'))
    .at(-1)
    ?.replace(/^(runner|raw)-client: /, '');
  const parts = [];
  if (killed) parts.push('killed: the scenario ran over 120s');
  if (/CLIENT TIMED OUT/.test(suiteOutput)) parts.push('client timed out (30s)');
  if (failures.length > 0) parts.push(`${describeCheck(failures[0])}${failures.length > 1 ? ` (+${failures.length - 1} more failed)` : ''}`);
  if (said) parts.push(`client: ${said}`);
  if (parts.length === 0 && warnings.length > 0) parts.push(`warning ${describeCheck(warnings[0])}`);
  if (parts.length === 0 && !passed) parts.push(`suite exited ${code}`);
  return { passed, reason: passed ? '' : parts.join(' | '), failedChecks: failures.map((check) => check.id) };
}

function describeCheck(check) {
  const why = check.errorMessage ?? check.details?.message ?? check.description ?? '';
  return `${check.id}: ${String(why).replace(/\s+/g, ' ')}`;
}

/** The per-scenario table, clients side by side, with a totals line per suite version. */
export function formatTable(results, clients) {
  const lines = [];
  const suites = [...new Set(results.map((result) => result.suite))];
  for (const suite of suites) {
    const rows = results.filter((result) => result.suite === suite);
    const scenarios = [...new Set(rows.map((row) => row.scenario))];
    const width = Math.max('scenario'.length, ...scenarios.map((name) => name.length));
    lines.push('', `${'scenario'.padEnd(width)}  ${'version'.padEnd(14)}  ${clients.map((client) => client.padEnd(6)).join('  ')}  reason`);
    for (const scenario of scenarios) {
      const byClient = Object.fromEntries(rows.filter((row) => row.scenario === scenario).map((row) => [row.client, row]));
      const verdicts = clients.map((client) => (byClient[client] ? (byClient[client].passed ? 'pass' : 'FAIL') : '-').padEnd(6));
      const failing = clients.map((client) => byClient[client]).filter((row) => row && !row.passed);
      const reason = failing.map((row) => (clients.length > 1 ? `${row.client}: ${row.reason}` : row.reason)).join('  ‖  ');
      lines.push(`${scenario.padEnd(width)}  ${suite.padEnd(14)}  ${verdicts.join('  ')}  ${clip(reason)}`);
    }
    const totals = clients.map((client) => {
      const mine = rows.filter((row) => row.client === client);
      return `${client} ${mine.filter((row) => row.passed).length}/${mine.length}`;
    });
    lines.push(`totals ${suite}: ${totals.join(', ')}`);
  }
  return lines.join('\n');
}

function clip(text) {
  return text.length > REASON_COLUMN_CHARS ? `${text.slice(0, REASON_COLUMN_CHARS - 1)}…` : text;
}
