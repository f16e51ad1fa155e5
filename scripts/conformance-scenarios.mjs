// What each client conformance scenario asks of a client: which tools to call,
// with which arguments, and how to answer the server's questions. Shared by the
// runner wrapper (scripts/conformance-runner-client.mjs) and the raw SDK client
// (scripts/conformance-raw-client.mjs), so both do the same work.

/** Scenarios whose server only answers `tools/list`: calling a tool there is an error. */
const LIST_ONLY = new Set(['json-schema-ref-no-deref']);

/** The tools a scenario's server expects to see called, in order, when they are known without listing. */
const KNOWN_CALLS = {
  tools_call: [{ name: 'add_numbers', arguments: { a: 2, b: 3 } }],
  'elicitation-sep1034-client-defaults': [{ name: 'test_client_elicitation_defaults', arguments: {} }],
  'sse-retry': [{ name: 'test_reconnection', arguments: {} }],
  'sep-2322-client-request-state': ['test_mrtr_echo_state', 'test_mrtr_unrelated', 'test_mrtr_no_state', 'test_mrtr_no_result_type'].map((name) => ({ name, arguments: {} })),
};

/** Answers to the server's form questions, per scenario; absent: decline. */
export const ELICIT_ANSWERS = {
  // Accept with nothing filled in: the client must add the schema's defaults (SEP-1034).
  'elicitation-sep1034-client-defaults': {},
  'sep-2322-client-request-state': { confirmed: true },
};

/** The auth scenarios whose tokens come without a login (no authorization code flow), by the `auth.type` that does it. */
export const MACHINE_AUTH = {
  'auth/client-credentials-basic': 'client-credentials',
  'auth/client-credentials-jwt': 'client-credentials',
  'auth/wif-jwt-bearer': 'workload-identity',
  'auth/enterprise-managed-authorization': 'enterprise-managed',
  'auth/cross-app-access-complete-flow': 'enterprise-managed',
};

/** The scenario's context (MCP_CONFORMANCE_CONTEXT), or {}. */
export function readContext(env = process.env) {
  try {
    return env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(env.MCP_CONFORMANCE_CONTEXT) : {};
  } catch {
    return {};
  }
}

/**
 * The calls for a scenario when they are known without `tools/list`: an array
 * (empty: list only), or undefined when the tools must be listed first.
 */
export function knownCalls(scenario, context) {
  if (Array.isArray(context.toolCalls)) return context.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args ?? {} }));
  if (LIST_ONLY.has(scenario)) return [];
  if (KNOWN_CALLS[scenario]) return KNOWN_CALLS[scenario];
  // Every auth scenario's server has one tool, `test-tool`.
  if (scenario.startsWith('auth/')) return [{ name: 'test-tool', arguments: {} }];
  return undefined;
}

/** The calls for a scenario from the tools its server lists: each tool once, with sample arguments. */
export function callsFromTools(scenario, tools) {
  if (scenario === 'json-schema-2020-12-preservation') {
    // Echo the schema as listed: the server checks that no keyword was lost on the way.
    const focal = tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
    return focal ? [{ name: 'json_schema_echo', arguments: { schema: focal.inputSchema } }] : [];
  }
  return tools.map((tool) => ({ name: tool.name, arguments: sampleArguments(tool.inputSchema) }));
}

/** Arguments that satisfy a simple input schema: defaults, first enum values, 2, 3, … for numbers, `test` for strings. */
export function sampleArguments(schema) {
  const args = {};
  let number = 2;
  for (const name of schema?.required ?? []) {
    const property = schema.properties?.[name] ?? {};
    if ('default' in property) args[name] = property.default;
    else if (Array.isArray(property.enum)) args[name] = property.enum[0];
    else if (property.type === 'number' || property.type === 'integer') args[name] = number++;
    else if (property.type === 'boolean') args[name] = true;
    else if (property.type === 'array') args[name] = [];
    else if (property.type === 'object') args[name] = {};
    else args[name] = 'test';
  }
  return args;
}
