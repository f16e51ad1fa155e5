import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createWorkspace, shiftingArgs, type Workspace } from './workspace.js';

/** A tool as test/apps/shifting.js lists it. */
export interface ShiftingTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
  annotations?: Record<string, unknown>;
}

export interface ShiftingWorkspace extends Workspace {
  /** Rewrites the tools the app lists from its next start (and its server info, when given). */
  setTools(tools: ShiftingTool[], server?: { name: string; version: string }): void;
  /** The names of the tools the app was called with, in order. */
  calls(): string[];
}

/**
 * A workspace whose one app, `notes`, is test/apps/shifting.js: it lists the
 * tools last given to setTools and logs each call, for tests of a tool that
 * changes under a workflow. `configYaml` is added to the config (a `policy:`).
 */
export function shiftingWorkspace(tools: ShiftingTool[], configYaml = ''): ShiftingWorkspace {
  const ws = createWorkspace('');
  const toolsFile = join(ws.dir, 'tools.json');
  const callsFile = join(ws.dir, 'calls.log');
  ws.write('runner.config.yaml', `artifacts: artifacts\napps:\n  notes: { command: node, args: ${JSON.stringify([...shiftingArgs, toolsFile, callsFile])} }\n${configYaml}`);
  const setTools = (next: ShiftingTool[], server?: { name: string; version: string }) => writeFileSync(toolsFile, JSON.stringify({ tools: next, server }));
  setTools(tools);
  const calls = () => (existsSync(callsFile) ? readFileSync(callsFile, 'utf8').split('\n').filter(Boolean).map((line) => line.split(' ')[0]!) : []);
  return { ...ws, setTools, calls };
}
