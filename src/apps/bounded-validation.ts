import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/client';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { CHECK_STOPPED, checkWithin, hasPattern, SCHEMA_CHECK_LIMIT_MS } from './bounded-check.js';

/**
 * The SDK's own JSON Schema validator (ajv, by dialect), with each check
 * against a schema that has a pattern held to `limitMs`: one that runs out of
 * time counts as not valid, saying why. The MCP client checks tool results
 * against their `outputSchema` with it.
 */
export class BoundedJsonSchemaValidator implements jsonSchemaValidator {
  private readonly inner = new AjvJsonSchemaValidator();

  constructor(private readonly limitMs = SCHEMA_CHECK_LIMIT_MS) {}

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const check = this.inner.getValidator<T>(schema);
    if (!hasPattern(schema)) return check;
    return (input) =>
      checkWithin(
        () => check(input),
        () => ({
          valid: false,
          data: undefined,
          errorMessage: `${CHECK_STOPPED} ${this.limitMs}ms: a \`pattern\` in the schema backtracks too much on this value`,
        }),
        this.limitMs,
      );
  }
}
