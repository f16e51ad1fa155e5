import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

// js-yaml, which reads every file, often notices a mistake far from where it
// is: an unclosed quote shows up as "missed comma" thirty lines on. The `yaml`
// library points at the quote itself, so it reads a file again once js-yaml
// has failed. It is loaded only then: it is slow (1.5 s for 10,000 steps) and
// loading it costs 50 ms.

const require = createRequire(import.meta.url);
let yaml: typeof Yaml | undefined;

/** The first syntax error the `yaml` library finds (offset and one-line message), if it finds one. */
export function pinpointSyntaxError(text: string, options: { json?: boolean }): { offset: number; message: string } | undefined {
  yaml ??= require('yaml') as typeof Yaml;
  // JSON.parse keeps the last of duplicate keys; `uniqueKeys: false` matches it for imported JSON.
  const [error] = yaml.parseDocument(text, { prettyErrors: false, uniqueKeys: !options.json }).errors;
  return error && { offset: error.pos[0], message: error.message.split('\n', 1)[0].trim() };
}
