import type { AppRegistry } from '../apps/registry.js';
import type { LiveApp } from './entries.js';

/**
 * Connects the apps (or takes their open connections) and reads what each
 * said at connect time. Costs no round trip of its own: a connection lists
 * its tools while it opens and keeps the list. An app that cannot be reached
 * is given as its Error.
 */
export async function readLiveApps(apps: AppRegistry, names: Iterable<string>, signal?: AbortSignal): Promise<Map<string, LiveApp | Error>> {
  const live = new Map<string, LiveApp | Error>();
  await Promise.all(
    [...new Set(names)].map(async (name) => {
      try {
        const connection = await apps.get(name, signal);
        const tools = await connection.listTools(signal);
        live.set(name, { server: connection.info.server, protocolVersion: connection.info.protocolVersion, tools });
      } catch (error) {
        live.set(name, error instanceof Error ? error : new Error(String(error)));
      }
    }),
  );
  return live;
}

/** Only the apps that answered. */
export function reachedApps(live: ReadonlyMap<string, LiveApp | Error>): Map<string, LiveApp> {
  return new Map([...live].filter((entry): entry is [string, LiveApp] => !(entry[1] instanceof Error)));
}
