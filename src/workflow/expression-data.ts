// Converts between JS values and @actions/expressions data, lazily for objects.
import { data } from '@actions/expressions';

const NULL = new data.Null();

/** Converts a JS value; objects convert lazily, so reading steps.a.outputs.x never copies all the steps. */
function toData(value: unknown): data.ExpressionData {
  switch (typeof value) {
    case 'string':
      return new data.StringData(value);
    case 'number':
      return new data.NumberData(value);
    case 'boolean':
      return new data.BooleanData(value);
    case 'bigint':
      return new data.NumberData(Number(value));
    case 'object': {
      if (value === null) return NULL;
      if (Array.isArray(value)) {
        const array = new data.Array();
        for (const entry of value as unknown[]) array.add(toData(entry));
        return array;
      }
      if (value instanceof Date) return new data.StringData(value.toISOString());
      return new LazyDictionary(value as Record<string, unknown>);
    }
    default:
      return NULL; // undefined, functions, symbols
  }
}

/** Converts a result back to plain JSON-like JS. */
export function toPlain(value: data.ExpressionData): unknown {
  switch (value.kind) {
    case data.Kind.Null:
      return null;
    case data.Kind.Boolean:
    case data.Kind.Number:
    case data.Kind.String:
      return value.value;
    case data.Kind.Array:
      return value.values().map((entry) => toPlain(entry));
    case data.Kind.Dictionary:
      // fromEntries defines properties, so a "__proto__" key stays a plain key.
      return Object.fromEntries(value.pairs().map((pair) => [pair.key, toPlain(pair.value)]));
    default:
      return null;
  }
}

/** A value as interpolated into a string. */
export function coerceToString(value: data.ExpressionData): string {
  // Objects and arrays interpolate as toJSON() would print them, not as "Object".
  return value.primitive ? value.coerceString() : JSON.stringify(toPlain(value), null, 2);
}

/** A plain value (what `readPlainValue` gives: string, finite number, boolean, null) as interpolated text, as the evaluator would write it. */
export function plainToString(value: unknown): string {
  return typeof value === 'string' ? value : coerceToString(toData(value));
}

/**
 * A read-only Dictionary over a JS object that converts each property on first
 * read. Lookup is case-insensitive like GitHub's, preferring an exact match.
 */
export class LazyDictionary extends data.Dictionary {
  readonly #source: Record<string, unknown>;
  readonly #converted = new Map<string, data.ExpressionData>();
  #keysByLowerCase: Map<string, string> | undefined;

  constructor(source: Record<string, unknown>) {
    super();
    this.#source = source;
  }

  override get(key: string): data.ExpressionData | undefined {
    const name = this.#resolve(key);
    if (name === undefined) return undefined;
    let value = this.#converted.get(name);
    if (value === undefined) {
      value = toData(this.#source[name]);
      this.#converted.set(name, value);
    }
    return value;
  }

  override values(): data.ExpressionData[] {
    return Object.keys(this.#source).map((key) => this.get(key)!);
  }

  override pairs(): { key: string; value: data.ExpressionData }[] {
    return Object.keys(this.#source).map((key) => ({ key, value: this.get(key)! }));
  }

  #resolve(key: string): string | undefined {
    if (Object.hasOwn(this.#source, key)) return key;
    if (this.#keysByLowerCase === undefined) {
      this.#keysByLowerCase = new Map();
      for (const name of Object.keys(this.#source)) {
        const lower = name.toLowerCase();
        if (!this.#keysByLowerCase.has(lower)) this.#keysByLowerCase.set(lower, name);
      }
    }
    return this.#keysByLowerCase.get(key.toLowerCase());
  }
}
