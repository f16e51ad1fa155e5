import { configSchema, countSchema, durationSchema, retrySchema, SCHEMA_DIALECT, type FromSchema } from '../config/schema.js';

// The JSON Schema of workflow files: the one source of truth for their shape
// (conventions in src/config/schema.ts). Checks that need more than one value
// (unknown apps, step references, cycles) live in load.ts.

/** Workflow names: they become folder names under the artifacts folder. */
export const WORKFLOW_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]*$';
/** `<app>.<tool>`: app names have no dots, tool names may (MCP allows them). */
export const USES_PATTERN = '^[A-Za-z0-9_-]+\\.[^\\s${}]+$';
/** Step ids: usable as `steps.<id>` in expressions. */
export const STEP_ID_PATTERN = '^[A-Za-z_][A-Za-z0-9_-]*$';
/**
 * The longest workflow name and step id. Both become folder names in
 * `<artifacts>/<workflow>/<run-id>/<step>/<index>/<file>`: 64 keeps that far
 * below the 255 bytes a name may have and the usual 4,096 of a path (a
 * 300-character name failed with ENAMETOOLONG after its call had run).
 */
export const MAX_NAME_LENGTH = 64;
/** The step id a step may not have: the run folder keeps the apps' logs in `logs/`, beside the steps' folders. */
export const RESERVED_STEP_ID = 'logs';

const templateMapSchema = <D extends string>(description: D) => ({ type: 'object', description, additionalProperties: true }) as const;

const inputSchema = {
  type: 'object',
  description: 'A workflow input, read as `${{ inputs.<name> }}`.',
  additionalProperties: false,
  properties: {
    type: {
      type: 'string',
      enum: ['string', 'number', 'integer', 'boolean', 'array', 'object'],
      description: 'Type of the value; `-i name=value` is converted to it. Default: string.',
    },
    default: { description: 'Value used when the input is not given.' },
    required: { type: 'boolean', description: 'Whether the input must be given. Default: true without a `default`, false with one.' },
    description: { type: 'string', description: 'What the input is for.' },
  },
} as const;

const watchSchema = {
  type: 'object',
  description: 'Run on files appearing or changing in watched folders (`runner watch`).',
  additionalProperties: false,
  required: ['paths'],
  properties: {
    paths: {
      type: 'array',
      minItems: 1,
      description: 'Globs of files to watch, relative to the config folder.',
      items: { type: 'string', minLength: 1 },
    },
    events: {
      type: 'array',
      minItems: 1,
      description: 'File events that trigger a run. Default: [add].',
      items: { type: 'string', enum: ['add', 'change', 'unlink'] },
    },
    debounce: durationSchema('Quiet time after the last event before a run starts. Default: 300ms.'),
    claim: {
      type: 'string',
      enum: ['move'],
      description: '`move`: move the file into processing/, then done/ or failed/ beside the watched folder.',
    },
  },
} as const;

const scheduleSchema = {
  type: 'object',
  description: 'Run on a cron schedule (`runner cron`).',
  additionalProperties: false,
  required: ['cron'],
  properties: {
    cron: { type: 'string', minLength: 1, description: 'Cron expression, e.g. "0 9 * * 1-5".' },
    timezone: { type: 'string', minLength: 1, description: 'IANA time zone, e.g. Europe/Berlin. Default: the local zone.' },
    overlap: {
      type: 'string',
      enum: ['skip', 'queue', 'allow'],
      description: 'What a due run does while the previous one still runs. Default: skip.',
    },
    'catch-up': {
      type: 'string',
      enum: ['one', 'none'],
      description: 'After downtime: run at most one missed occurrence (one), or none. Default: one.',
    },
  },
} as const;

const stepSchema = {
  type: 'object',
  description: 'One tool call.',
  additionalProperties: false,
  required: ['id', 'uses'],
  properties: {
    id: {
      type: 'string',
      pattern: STEP_ID_PATTERN,
      maxLength: MAX_NAME_LENGTH,
      errorMessage: `a step id of up to ${MAX_NAME_LENGTH} letters, digits, \`_\` and \`-\`, not starting with a digit or \`-\``,
      description: 'Unique id; other steps read this step as `${{ steps.<id> }}`. Not `logs`: the run folder keeps the apps\' logs there.',
    },
    uses: {
      type: 'string',
      pattern: USES_PATTERN,
      errorMessage: '`<app>.<tool>`, like image.resize',
      description: 'The tool to call: `<app>.<tool>`, the tool name exactly as the app lists it (no expressions).',
    },
    with: templateMapSchema('Tool arguments; strings may contain ${{ }} expressions.'),
    needs: {
      description: 'Steps that must finish first. References to `steps.<id>` add needs implicitly.',
      errorMessage: 'a step id or a list of step ids',
      oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    },
    if: {
      type: ['string', 'boolean'],
      description: 'Run the step only when this expression is true; with or without ${{ }}.',
    },
    foreach: {
      type: ['string', 'array'],
      description: 'Run the step once per item of this list (usually one ${{ }}); `${{ item }}` and `${{ index }}` inside.',
    },
    retry: retrySchema('Retry policy for this step; a number is a number of attempts.'),
    timeout: durationSchema('Hard cap for one call of this step.'),
    'idle-timeout': durationSchema('Fail the call after this long without a progress notification.'),
    'continue-on-error': { type: 'boolean', description: 'Let the run succeed even when this step fails. Default: false.' },
    elicit: templateMapSchema('Answers for elicitation requests from the tool: field → value.'),
    'max-items': countSchema('With `foreach`: the most items the list may have; more fails the step as `input` before any call. Default: 10000.'),
  },
} as const;

/** The schema of workflow files. */
export const workflowSchema = {
  $schema: SCHEMA_DIALECT,
  title: 'runner workflow',
  description: 'A workflow: steps that call MCP tools, and the triggers that start it.',
  type: 'object',
  additionalProperties: false,
  required: ['steps'],
  properties: {
    name: {
      type: 'string',
      pattern: WORKFLOW_NAME_PATTERN,
      maxLength: MAX_NAME_LENGTH,
      errorMessage: `a name of up to ${MAX_NAME_LENGTH} lowercase letters, digits, \`_\` and \`-\`, starting with a letter or digit`,
      description: 'Workflow name; runs are stored under artifacts/<name>/. Default: the file name without .yaml.',
    },
    description: { type: 'string', description: 'What the workflow does.' },
    on: {
      type: 'object',
      description: 'Triggers; manual runs (`runner run`) always work.',
      additionalProperties: false,
      properties: {
        watch: watchSchema,
        schedule: { type: 'array', description: 'Cron schedules.', items: scheduleSchema },
      },
    },
    inputs: {
      type: 'object',
      description: 'Inputs by name, read as `${{ inputs.<name> }}`.',
      propertyNames: { type: 'string', pattern: STEP_ID_PATTERN, errorMessage: 'an input name of letters, digits, `_` and `-`' },
      additionalProperties: inputSchema,
    },
    concurrency: countSchema('Max steps of one run in flight.'),
    timeout: durationSchema('Time limit for the whole run.'),
    defaults: {
      type: 'object',
      description: 'Defaults for every step.',
      additionalProperties: false,
      properties: {
        timeout: durationSchema('Default per-call timeout.'),
        retry: retrySchema('Default retry policy; a number is a number of attempts.'),
      },
    },
    steps: { type: 'array', minItems: 1, description: 'The steps, run as their needs allow.', items: stepSchema },
  },
} as const;

/** A workflow file as written, after validation. */
export type RawWorkflow = FromSchema<typeof workflowSchema>;
export type RawStep = FromSchema<typeof stepSchema>;

/** The generated editor schemas (`npm run schemas`), by path in the repository. */
export const SCHEMA_FILES: Record<string, object> = {
  'schemas/config.schema.json': configSchema,
  'schemas/workflow.schema.json': workflowSchema,
};
