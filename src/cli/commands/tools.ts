import { AppRegistry } from '../../apps/registry.js';
import { loadConfig } from '../../config/load.js';
import { RunnerError } from '../../errors.js';
import { decidePolicy, readToolHints } from '../../scheduler/policy.js';
import { maskSecretsDeep } from '../../secrets.js';
import type { CliIO, GlobalOptions } from '../io.js';
import { reportWarnings } from '../report-error.js';

/** `runner tools [APP]`: every tool with its annotations and the policy decision that applies. */
export async function toolsCommand(appName: string | undefined, options: GlobalOptions & { json?: boolean }, io: CliIO): Promise<number> {
  const config = await loadConfig({ configPath: options.config, cwd: io.cwd, env: io.env });
  reportWarnings(config.warnings, io.stderr);
  const names = appName ? [appName] : Object.keys(config.apps);
  if (appName && !config.apps[appName]) {
    throw new RunnerError('usage', `no app named \`${appName}\` in ${config.file ?? 'the config'}`, {
      hint: `apps: ${Object.keys(config.apps).join(', ') || 'none'}`,
    });
  }
  const apps = new AppRegistry({ config });
  try {
    const listing = await Promise.all(
      names.map(async (name) => {
        try {
          const connection = await apps.get(name);
          const tools = await connection.listTools();
          return {
            app: name,
            protocolVersion: connection.info.protocolVersion,
            server: connection.info.server,
            tools: tools.map((tool) => {
              const hints = readToolHints(tool);
              const decision = decidePolicy(`${name}.${tool.name}`, hints, config.policy);
              return { name: tool.name, title: tool.title ?? tool.annotations?.title, description: tool.description, annotations: tool.annotations ?? {}, hints, policy: decision };
            }),
          };
        } catch (error) {
          return { app: name, error: error instanceof Error ? error.message : String(error), tools: [] };
        }
      }),
    );
    if (options.json) {
      io.stdout(JSON.stringify(maskSecretsDeep(listing, config.secretValues), null, 2) + '\n');
    } else {
      for (const entry of listing) {
        if ('error' in entry && entry.error) {
          io.stdout(`${entry.app}: unavailable: ${entry.error}\n`);
          continue;
        }
        const server = 'server' in entry && entry.server ? `${entry.server.name} ${entry.server.version}` : '';
        io.stdout(`${entry.app} (${server}, protocol ${'protocolVersion' in entry ? entry.protocolVersion : '?'})\n`);
        for (const tool of entry.tools) {
          const flags = [
            tool.hints.readOnly ? 'read-only' : tool.hints.destructive ? 'destructive' : 'writes',
            tool.hints.idempotent && !tool.hints.readOnly ? 'idempotent' : '',
            tool.hints.openWorld ? 'open-world' : '',
          ].filter(Boolean);
          io.stdout(`  ${`${entry.app}.${tool.name}`.padEnd(28)} ${tool.policy.action.padEnd(5)}  ${flags.join(', ')}  (${tool.policy.reason})\n`);
        }
      }
    }
    return listing.some((entry) => 'error' in entry && entry.error) ? 1 : 0;
  } finally {
    await apps.closeAll();
  }
}
