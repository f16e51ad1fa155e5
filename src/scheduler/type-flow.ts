// Types flowing between steps, judged by the apps' own schemas: a field read
// from another step's outputs must be in the producer's outputSchema, and a
// value whose type is known must fit the consumer's inputSchema. Only what is
// certain is reported: a schema that does not say lets everything through.
import type { Tool } from '@modelcontextprotocol/client';
import type { Segment } from '../workflow/expression-access.js';
import type { ValueType } from '../workflow/step-reads.js';
import { isRecord } from '../is-record.js';

type Schema = Record<string, unknown>;

/** Where `outputs.<path>` leads in an outputSchema: the schema there, or the first field it does not have. */
export interface OutputSchemaPlace {
  schema?: Schema;
  missing?: { index: number; field: string; fields: string[] };
}

/** Follows property names and indexes through a schema; stops (no `schema`) where it cannot tell. */
export function followOutputSchema(outputSchema: unknown, path: readonly Segment[]): OutputSchemaPlace {
  let schema = isRecord(outputSchema) ? outputSchema : undefined;
  for (let index = 0; index < path.length && schema; index++) {
    const segment = path[index]!;
    if (typeof segment === 'string') {
      const properties = isRecord(schema.properties) ? schema.properties : undefined;
      if (!properties) return {};
      const name = Object.hasOwn(properties, segment) ? segment : Object.keys(properties).find((key) => key.toLowerCase() === segment.toLowerCase());
      if (name === undefined) {
        // Fields outside `properties` may still come when the schema allows them.
        const open = schema.patternProperties !== undefined || (schema.additionalProperties !== undefined && schema.additionalProperties !== false);
        return open ? {} : { missing: { index, field: segment, fields: Object.keys(properties) } };
      }
      schema = isRecord(properties[name]) ? properties[name] : undefined;
    } else {
      schema = isRecord(schema.items) ? schema.items : undefined;
    }
  }
  return { schema };
}

/** The one type a schema allows (`integer` for `type: integer`), or undefined when it allows several or does not say. */
export function schemaType(schema: Schema | undefined): ValueType | undefined {
  if (!schema) return undefined;
  if (typeof schema.type === 'string') return schema.type as ValueType;
  if ('const' in schema) return typeOfJson(schema.const);
  return undefined;
}

/** The types argument `name` of a tool may have, when the inputSchema says; undefined when it does not. */
function argumentTypes(tool: Pick<Tool, 'inputSchema'>, name: string): string[] | undefined {
  const properties = (tool.inputSchema as { properties?: unknown } | undefined)?.properties;
  const schema = isRecord(properties) && Object.hasOwn(properties, name) ? properties[name] : undefined;
  if (!isRecord(schema)) return undefined;
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type) && schema.type.every((type) => typeof type === 'string')) return schema.type;
  return undefined;
}

/**
 * The types argument `name` takes when a value of `type` cannot be it;
 * undefined when it can (a number or boolean for a string is passed as its
 * string form) or the schema does not say.
 */
export function mismatchedArgumentType(tool: Pick<Tool, 'inputSchema'>, name: string, type: ValueType): string[] | undefined {
  const types = argumentTypes(tool, name);
  if (!types || types.includes(type)) return undefined;
  if ((type === 'integer' && types.includes('number')) || (type === 'number' && types.includes('integer'))) return undefined;
  if ((type === 'integer' || type === 'number' || type === 'boolean') && types.includes('string')) return undefined;
  return types;
}

/** "an integer", "a string": a type as messages say it. */
export function describeType(type: string): string {
  return type === 'integer' || type === 'array' || type === 'object' ? `an ${type}` : type === 'null' ? 'null' : `a ${type}`;
}

function typeOfJson(value: unknown): ValueType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as ValueType;
}
