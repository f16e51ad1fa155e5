import { basename, sep } from 'node:path';

// The `${...}` placeholders of other clients' files, expanded the way each
// client does. A placeholder runner cannot fill (an unset variable, a VS Code
// input prompt) makes the server unusable instead of silently becoming "".

/** Why a placeholder cannot be filled, and where in the string it is. */
export interface PlaceholderProblem {
  offset: number;
  message: string;
  hint?: string;
}

/** What a placeholder's inner text (`env:HOME`) stands for; undefined: left as written. */
export type PlaceholderResolver = (inner: string) => { value: string } | { problem: Omit<PlaceholderProblem, 'offset'> } | undefined;

const PLACEHOLDER = /\$\{([^}]*)\}/g;

/** Replaces each `${...}` in `text` with what `resolve` says; problems carry their offset in `text`. */
export function expandPlaceholders(text: string, resolve: PlaceholderResolver): { value: string; problems: PlaceholderProblem[] } {
  const problems: PlaceholderProblem[] = [];
  if (!text.includes('${')) return { value: text, problems };
  const value = text.replace(PLACEHOLDER, (match, inner: string, offset: number) => {
    const resolved = resolve(inner);
    if (resolved === undefined) return match;
    if ('problem' in resolved) {
      problems.push({ offset, ...resolved.problem });
      return '';
    }
    return resolved.value;
  });
  return { value, problems };
}

const SHELL_VARIABLE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

/**
 * Claude Code's `.mcp.json` (and so every `mcpServers` file): `${VAR}` and
 * `${VAR:-default}` (the default also when VAR is empty); anything else in
 * braces stays as written.
 */
export function mcpServersResolver(env: NodeJS.ProcessEnv): PlaceholderResolver {
  return (inner) => {
    const match = SHELL_VARIABLE.exec(inner);
    if (!match) return undefined;
    const [, name, fallback] = match as unknown as [string, string, string | undefined];
    const value = env[name];
    if (fallback !== undefined) return { value: value === undefined || value === '' ? fallback : value };
    if (value !== undefined) return { value };
    return { problem: { message: `environment variable \`${name}\` is not set`, hint: `set ${name} in the environment (or in .env beside runner.config.yaml), or give a default: \${${name}:-value}` } };
  };
}

/** Where VS Code's predefined variables point for one mcp.json. */
export interface VsCodeFolders {
  /** The folder holding `.vscode/` (or the file's own folder). */
  workspaceFolder: string;
  userHome: string;
}

/**
 * VS Code's mcp.json: `${env:VAR}`, `${userHome}`, `${workspaceFolder}`,
 * `${workspaceFolderBasename}`, `${pathSeparator}` and `${/}`. `${input:...}`
 * (a prompt, or a secret VS Code stores) and any other variable cannot be
 * filled outside VS Code.
 */
export function vsCodeResolver(env: NodeJS.ProcessEnv, folders: VsCodeFolders): PlaceholderResolver {
  return (inner) => {
    if (inner.startsWith('env:')) {
      const name = inner.slice(4);
      const value = env[name];
      if (value !== undefined) return { value };
      return { problem: { message: `environment variable \`${name}\` is not set`, hint: `set ${name} in the environment (or in .env beside runner.config.yaml)` } };
    }
    switch (inner) {
      case 'userHome':
        return { value: folders.userHome };
      case 'workspaceFolder':
        return { value: folders.workspaceFolder };
      case 'workspaceFolderBasename':
        return { value: basename(folders.workspaceFolder) };
      case 'pathSeparator':
      case '/':
        return { value: sep };
    }
    if (inner.startsWith('input:')) {
      return {
        problem: {
          message: `\`\${${inner}}\` is asked of the user by VS Code, which runner cannot do`,
          hint: 'declare the server in apps: of runner.config.yaml with the value from an environment variable (${VAR}), or leave it out with `skip`',
        },
      };
    }
    return { problem: { message: `\`\${${inner}}\` is a VS Code variable runner does not fill`, hint: 'runner fills ${env:VAR}, ${userHome}, ${workspaceFolder}, ${workspaceFolderBasename} and ${pathSeparator}' } };
  };
}
