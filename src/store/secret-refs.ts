import type { SecretEntry } from '../config/types.js';
import { RunnerError } from '../errors.js';
import { replaceSecrets } from '../secrets.js';

/**
 * How the run store keeps secrets: never the value, but a reference to the
 * env name it came from, `ESC{NAME}` (`ESC{NAME:json}` for its JSON-escaped
 * form). People see `***` wherever a record is shown; `resume` puts the
 * current value back, so a tool never receives `***` in place of a secret.
 * A literal ESC in a value is doubled, so nothing an app returns can pose as
 * a reference and pull a secret out on resume.
 */
const ESC = '\u001b';
// eslint-disable-next-line no-control-regex -- ESC is what marks a reference
const REFERENCE = /\u001b(\u001b|\{([A-Za-z_][A-Za-z0-9_]*)(:json)?\})/g;

/** A value as the store keeps it: references in place of secrets. */
export function toStoreForm(text: string, secrets: readonly SecretEntry[]): string {
  const escaped = text.includes(ESC) ? text.replaceAll(ESC, ESC + ESC) : text;
  if (secrets.length === 0) return escaped;
  return replaceSecrets(escaped, secrets, (entry, form) => `${ESC}{${entry.name}${form === 'json' ? ':json' : ''}}`);
}

/** A stored value as people see it: `***` for each secret. */
export function toDisplayForm(text: string): string {
  if (!text.includes(ESC)) return text;
  return text.replace(REFERENCE, (_match, escaped: string) => (escaped === ESC ? ESC : '***'));
}

/**
 * A stored value with each secret's current value put back. Throws when a
 * secret it refers to is no longer set: the value cannot be rebuilt.
 */
export function fromStoreForm(text: string, secrets: readonly SecretEntry[]): string {
  if (!text.includes(ESC)) return text;
  return text.replace(REFERENCE, (_match, escaped: string, name: string | undefined, json: string | undefined) => {
    if (escaped === ESC) return ESC;
    const entry = secrets.find((candidate) => candidate.name === name);
    if (!entry) {
      throw new RunnerError('usage', `a value kept from this run held the secret ${name}, which is not set now, so it cannot be sent again`, {
        hint: `set ${name} in the environment (and list it under \`secrets\`), then resume again`,
      });
    }
    return json ? JSON.stringify(entry.value).slice(1, -1) : entry.value;
  });
}
