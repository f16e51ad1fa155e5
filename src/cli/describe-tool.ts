// A tool's JSON Schemas as text people read (`runner tools APP.TOOL`): each
// argument on a line with its type, whether it is required, its default,
// allowed values and description, nested objects indented; and a `with:`
// block to paste into a step.

/** The part of a JSON Schema these functions read; anything else is ignored. */
type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema | Schema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  title?: string;
  anyOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
  minimum?: number;
  maximum?: number;
};

const asSchema = (value: unknown): Schema => (value && typeof value === 'object' && !Array.isArray(value) ? value : {});

/** The type of a schema in a few words: `string`, `integer | null`, `array of string`. */
export function describeType(value: unknown): string {
  const schema = asSchema(value);
  if (schema.const !== undefined) return `constant ${JSON.stringify(schema.const)}`;
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches && !schema.type) return [...new Set(branches.map(describeType))].join(' | ');
  if (schema.$ref && !schema.type) return `see ${schema.$ref}`;
  const types = typesOf(schema);
  if (types.length === 0) return schema.enum ? 'one of the values below' : 'any';
  return types.map((type) => (type === 'array' && schema.items && !Array.isArray(schema.items) ? `array of ${describeType(schema.items)}` : type)).join(' | ');
}

/**
 * One line per property of an object schema, nested objects (and lists of
 * objects) indented below their property; `['(none)']` without properties.
 */
export function describeFields(value: unknown, indent = '  '): string[] {
  const schema = asSchema(value);
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return [`${indent}(none)`];
  const required = new Set(schema.required ?? []);
  const width = Math.max(...properties.map(([name]) => name.length));
  const typeWidth = Math.max(...properties.map(([, property]) => describeType(property).length));
  const lines: string[] = [];
  for (const [name, raw] of properties) {
    const property = asSchema(raw);
    const facts = [describeType(property).padEnd(typeWidth), required.has(name) ? 'required' : 'optional'];
    if (property.default !== undefined) facts.push(`default ${inline(property.default)}`);
    if (property.enum) facts.push(`one of ${property.enum.map(inline).join(', ')}`);
    const range = describeRange(property);
    if (range) facts.push(range);
    const about = oneLine(property.description ?? property.title);
    lines.push(`${indent}${name.padEnd(width)}  ${facts.join('  ')}${about ? `  ${about}` : ''}`.trimEnd());
    const nested = nestedObject(property);
    if (nested) lines.push(...describeFields(nested, `${indent}  `));
  }
  return lines;
}

/**
 * A `with:` block for a step that calls the tool: every required argument
 * with a placeholder of its type (its default or first allowed value when it
 * has one), every optional one commented out. Valid YAML once uncommented.
 */
export function sampleWith(inputSchema: unknown, indent = ''): string[] {
  const schema = asSchema(inputSchema);
  if (Object.keys(schema.properties ?? {}).length === 0) return [`${indent}with: {}`];
  return [`${indent}with:`, ...sampleFields(schema, `${indent}  `, '')];
}

function sampleFields(schema: Schema, indent: string, commented: string): string[] {
  const required = new Set(schema.required ?? []);
  const rows: { line: string; comment: string; nested?: string[] }[] = [];
  for (const [name, raw] of Object.entries(schema.properties ?? {})) {
    const property = asSchema(raw);
    const prefix = required.has(name) ? commented : '# ';
    const key = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(name) ? name : JSON.stringify(name);
    const about = oneLine(property.description ?? property.title ?? (property.enum ? `one of ${property.enum.map(inline).join(', ')}` : undefined), 60);
    const comment = `# ${describeType(property)}${required.has(name) ? '' : ', optional'}${about ? `: ${about}` : ''}`;
    const nested = nestedObject(property);
    if (nested && Object.keys(nested.properties ?? {}).length > 0 && property.default === undefined && !isArraySchema(property)) {
      rows.push({ line: `${indent}${prefix}${key}:`, comment, nested: sampleFields(nested, `${indent}  `, prefix) });
    } else {
      rows.push({ line: `${indent}${prefix}${key}: ${inline(placeholderFor(property))}`, comment });
    }
  }
  // Comments line up in a column, unless one value is too long for it.
  const width = Math.min(Math.max(...rows.map((row) => row.line.length)), indent.length + 40);
  return rows.flatMap((row) => [`${row.line.padEnd(width)}  ${row.comment}`, ...(row.nested ?? [])]);
}

/** A value of the schema's type to start from: its default, const or first allowed value, else an empty one. */
function placeholderFor(schema: Schema): unknown {
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const type = typesOf(schema).find((candidate) => candidate !== 'null') ?? typesOf(asSchema((schema.anyOf ?? schema.oneOf)?.[0]))[0];
  switch (type) {
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return {};
    case 'null':
      return null;
    default:
      return '';
  }
}

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema.type)) return schema.type.map(String);
  return typeof schema.type === 'string' ? [schema.type] : [];
}

function isArraySchema(schema: Schema): boolean {
  return typesOf(schema).includes('array');
}

/** The object schema whose fields go below a property: the property's own, or its items'. */
function nestedObject(schema: Schema): Schema | undefined {
  if (schema.properties && Object.keys(schema.properties).length > 0) return schema;
  const items = asSchema(Array.isArray(schema.items) ? undefined : schema.items);
  return items.properties && Object.keys(items.properties).length > 0 ? items : undefined;
}

function describeRange(schema: Schema): string | undefined {
  const { minimum, maximum } = schema;
  if (typeof minimum === 'number' && typeof maximum === 'number') return `${minimum} to ${maximum}`;
  if (typeof minimum === 'number') return `at least ${minimum}`;
  if (typeof maximum === 'number') return `at most ${maximum}`;
  return undefined;
}

/** A value as YAML flow text (JSON is YAML). */
function inline(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/** A description on one line, cut at `max` characters. */
function oneLine(text: string | undefined, max = 100): string {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat;
}
