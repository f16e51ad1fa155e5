import { FAILSAFE_SCHEMA, Type, type Schema } from 'js-yaml';

// The YAML 1.2 core schema, resolved exactly as the spec (and the `yaml`
// library runner used before) says: `yes`, `no` and `on` are strings, `true`
// and `false` booleans, `0o17` and `-.5` numbers, `0b101` and `-0x1F` strings.
// js-yaml's own CORE_SCHEMA reads those last four the other way round.

const NULL = /^(?:~|null|Null|NULL)$/;
const BOOL = /^(?:true|True|TRUE|false|False|FALSE)$/;
const INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;
const FLOAT = /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

/** A plain scalar that may be a number starts with a digit, a sign or a dot; checked first, as most strings do not. */
function mayBeNumber(text: string): boolean {
  const c = text.charCodeAt(0);
  return (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
}

function readInt(text: string): number {
  if (text.startsWith('0o')) return parseInt(text.slice(2), 8);
  if (text.startsWith('0x')) return parseInt(text.slice(2), 16);
  return Number(text);
}

function readFloat(text: string): number {
  const lower = text.toLowerCase();
  if (lower.endsWith('.inf')) return text.startsWith('-') ? -Infinity : Infinity;
  if (lower === '.nan') return NaN;
  return Number(text);
}

/** `text` is null for an explicitly tagged empty node (`!!null`). */
function scalarType(name: string, resolve: (text: string | null) => boolean, construct: (text: string) => unknown): Type {
  return new Type(`tag:yaml.org,2002:${name}`, { kind: 'scalar', resolve, construct });
}

/** A tag runner does not know (`!Ref`, `!!binary`) keeps the value as written: a scalar's text, the list or mapping. */
function keepUnknownTag(kind: 'scalar' | 'sequence' | 'mapping'): Type {
  // Tag '' is a prefix of every tag; js-yaml tries these multi types only after the known tags.
  return new Type('', { kind, multi: true, construct: (data: unknown) => data ?? (kind === 'scalar' ? '' : data) });
}

/** YAML 1.2 core: strings, lists and mappings plus null, true/false, integers and floats; other tags are ignored. */
export const CORE_SCHEMA: Schema = FAILSAFE_SCHEMA.extend({
  explicit: [keepUnknownTag('scalar'), keepUnknownTag('sequence'), keepUnknownTag('mapping')],
  implicit: [
    scalarType('null', (text) => text === null || (text.length <= 4 && NULL.test(text)), () => null),
    scalarType('bool', (text) => text !== null && text.length >= 4 && text.length <= 5 && BOOL.test(text), (text) => text[0] === 't' || text[0] === 'T'),
    scalarType('int', (text) => text !== null && mayBeNumber(text) && INT.test(text), readInt),
    scalarType('float', (text) => text !== null && mayBeNumber(text) && FLOAT.test(text), readFloat),
  ],
});
