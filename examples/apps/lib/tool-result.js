// Tool registration with JSON Schema, and results that put caller errors in-band (isError).
import { fromJsonSchema } from '@modelcontextprotocol/server';

/** An error the caller caused (bad path, missing file, bad cell): reported as `isError: true`. */
export class ToolError extends Error {
  name = 'ToolError';
}

/** A successful result: `structuredContent` plus a text block with the same JSON. */
export function jsonResult(data, extraContent = []) {
  return {
    content: [...extraContent, { type: 'text', text: JSON.stringify(data) }],
    structuredContent: data,
  };
}

/** A failed result the caller can read and act on. */
export function errorResult(message) {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/**
 * Register a tool whose schemas are plain JSON Schema. `handler(args)` returns
 * the structured output (wrapped by jsonResult) or a full CallToolResult when
 * it has `content`. Errors become isError results with a clear message.
 */
export function registerJsonTool(server, name, spec, handler) {
  const { input, output, ...config } = spec;
  server.registerTool(
    name,
    { ...config, inputSchema: fromJsonSchema(input), outputSchema: fromJsonSchema(output) },
    async (args) => {
      try {
        const value = await handler(args ?? {});
        return value && Array.isArray(value.content) ? value : jsonResult(value);
      } catch (error) {
        return errorResult(describeError(error));
      }
    },
  );
}

// Node fs errors carry the path; say what went wrong in words a caller can act on.
function describeError(error) {
  if (error instanceof ToolError) return error.message;
  const where = error?.path ? ` ${error.path}` : '';
  switch (error?.code) {
    case 'ENOENT': return `file not found:${where}`;
    case 'EISDIR': return `expected a file but found a folder:${where}`;
    case 'ENOTDIR': return `a parent of${where} is not a folder`;
    case 'EACCES':
    case 'EPERM': return `permission denied:${where}`;
    default: return error instanceof Error ? error.message : String(error);
  }
}
