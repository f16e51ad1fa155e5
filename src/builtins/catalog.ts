import type { Tool } from '@modelcontextprotocol/client';

// The runner's own tools: data shaping that needs no app. They are steps like
// any other (`uses: runner.transform`), listed by `runner tools runner`, and
// checked by `validate`; they only read their inputs and write into their own
// step folder, so the policy always allows them.

/** The app name the built-in tools live under; no config may declare an app of that name. */
export const BUILTIN_APP = 'runner';

/** The apps the steps call, built-in tools left out (each name as often as it is used). */
export function appsCalledBy(steps: readonly { app: string }[]): string[] {
  return steps.map((step) => step.app).filter((app) => app !== BUILTIN_APP);
}

const LOCAL_READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

export const BUILTIN_TOOLS: readonly Tool[] = [
  {
    name: 'transform',
    title: 'Reshape data with JSONata',
    description:
      'Evaluates a JSONata expression against `input` (any JSON value, usually another step\'s outputs); the result is this step\'s `outputs`, and its JSON is its `text`.',
    inputSchema: {
      type: 'object',
      properties: {
        input: { description: 'The data the expression reads as `$`.' },
        expression: { type: 'string', description: 'A JSONata expression, e.g. `$.{ "row": [category, value] }.row`.' },
      },
      required: ['expression'],
      additionalProperties: false,
    },
    annotations: { title: 'Reshape data with JSONata', ...LOCAL_READ_ONLY },
  },
  {
    name: 'save',
    title: 'Save a named file',
    description:
      'Writes `content` as a file named `name` in this step\'s folder: a string as it is, anything else as JSON, or as CSV when the name ends in .csv and the content is a list of rows (arrays) or records (objects). `files` lists it; `outputs` is `{ path, bytes }`.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'File name, e.g. report.csv; it cannot leave the step folder.' },
        content: { description: 'Text, or any JSON value.' },
        format: { type: 'string', enum: ['text', 'json', 'csv'], description: 'Overrides the format chosen from the name and content.' },
      },
      required: ['name', 'content'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, bytes: { type: 'integer' } },
      required: ['path', 'bytes'],
    },
    annotations: { title: 'Save a named file', ...LOCAL_READ_ONLY },
  },
];

/** The built-in tool of that name, or undefined. */
export function findBuiltinTool(name: string): Tool | undefined {
  return BUILTIN_TOOLS.find((tool) => tool.name === name);
}
