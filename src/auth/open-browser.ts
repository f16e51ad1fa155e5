import { spawn } from 'node:child_process';

/**
 * Asks the desktop to open `url`, best effort: `open` on macOS, `xdg-open`
 * where there is a display, the URL handler on Windows. Returns whether it
 * tried; it never waits for the browser and never fails (the URL is printed
 * anyway, for a machine without one).
 */
export function openBrowser(url: string, platform: NodeJS.Platform, env: NodeJS.ProcessEnv): boolean {
  const command = browserCommand(url, platform, env);
  if (!command) return false;
  try {
    const child = spawn(command[0], command.slice(1), { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

function browserCommand(url: string, platform: NodeJS.Platform, env: NodeJS.ProcessEnv): [string, ...string[]] | undefined {
  if (platform === 'darwin') return ['open', url];
  if (platform === 'win32') return ['rundll32', 'url.dll,FileProtocolHandler', url];
  return env.DISPLAY || env.WAYLAND_DISPLAY ? ['xdg-open', url] : undefined;
}
