// Command-line options shared by the demo apps: --root DIR and --http PORT.
import { resolve } from 'node:path';

/**
 * Parse the app's argv into { root, httpPort }.
 * root: --root DIR, else $RUNNER_ARTIFACTS, else <cwd>/artifacts (absolute).
 * httpPort: --http PORT, else $MCP_HTTP_PORT, else undefined (serve stdio).
 */
export function parseAppArgs(argv = process.argv.slice(2), env = process.env, cwd = process.cwd()) {
  let root;
  let http;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const takeValue = () => {
      if (inline !== undefined) return inline;
      const value = argv[++i];
      if (value === undefined) throw new Error(`Expected a value after \`${flag}\``);
      return value;
    };
    if (flag === '--root') root = takeValue();
    else if (flag === '--http') http = takeValue();
    else throw new Error(`Unknown argument \`${arg}\`; expected --root DIR or --http PORT`);
  }
  root ??= env.RUNNER_ARTIFACTS || 'artifacts';
  http ??= env.MCP_HTTP_PORT || undefined;
  return { root: resolve(cwd, root), httpPort: http === undefined ? undefined : parsePort(http) };
}

function parsePort(text) {
  const port = Number(text);
  if (!/^\d+$/.test(String(text)) || port > 65535) {
    throw new Error(`Expected \`--http\` to be a port from 0 to 65535, got \`${text}\``);
  }
  return port;
}
