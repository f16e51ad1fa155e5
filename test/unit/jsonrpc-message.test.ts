import { deserializeMessage } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { checkMessage, plainResultResponse } from '../../src/apps/jsonrpc-message.js';

// Lines from an app are checked by hand when they are a plain result response
// and by the SDK's JSON-RPC schema otherwise. Whatever the line, the outcome
// must be the SDK's: the same message (keys in the same order, no key more or
// less) or the same error.

const INFO = 'io.modelcontextprotocol/serverInfo';

/** Lines the hand check takes. */
const TAKEN = [
  '{"jsonrpc":"2.0","id":0,"result":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"text":"hi"}}}',
  `{"jsonrpc":"2.0","id":7,"result":{"_meta":{"${INFO}":{"name":"faulty","version":"1.0.0"}},"content":[],"resultType":"complete"}}`,
  `{"result":{"content":[],"_meta":{"${INFO}":{"version":"2","title":"T","name":"n","description":"d","websiteUrl":"https://x"}}},"id":"a-1","jsonrpc":"2.0"}`,
  '{"id":-0,"jsonrpc":"2.0","result":{}}',
  '{"jsonrpc":"2.0","id":9007199254740991,"result":{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}}',
];

/** Lines the hand check leaves to the schema. */
const OTHERS = [
  '{"jsonrpc":"2.0","id":1,"result":{},"extra":5}',
  '{"jsonrpc":"2.0","id":1.5,"result":{}}',
  '{"jsonrpc":"2.0","id":null,"result":{}}',
  '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}',
  '{"jsonrpc":"1.0","id":1,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":[]}',
  '{"jsonrpc":"2.0","id":1,"result":null}',
  '{"jsonrpc":"2.0","id":1,"result":{"__proto__":{"polluted":true},"a":1}}',
  '{"jsonrpc":"2.0","id":1,"result":{"_meta":{}}}',
  '{"jsonrpc":"2.0","id":1,"result":{"_meta":{"other":1}}}',
  `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"${INFO}":{"name":"n"}}}}`,
  `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"${INFO}":{"name":"n","version":2}}}}`,
  `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"${INFO}":{"name":"n","version":"1","extra":true}}}}`,
  `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"${INFO}":{"name":"n","version":"1","icons":[]}}}}`,
  `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"${INFO}":{"name":"n","version":"1"},"progressToken":3}}}`,
  `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"${INFO}":"faulty"}}}`,
  '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom","data":{"q":1}}}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}',
  '{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}}',
  '{"jsonrpc":"2.0","id":1}',
  '[1,2]',
  '"text"',
  'null',
];

function outcome(parse: () => unknown): { value: unknown; text: string } | { error: string } {
  try {
    const value = parse();
    return { value, text: JSON.stringify(value) };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

describe('plainResultResponse', () => {
  it('takes plain result responses and nothing else', () => {
    for (const line of TAKEN) expect(plainResultResponse(JSON.parse(line)), line).toBeDefined();
    for (const line of OTHERS) expect(plainResultResponse(JSON.parse(line)), line).toBeUndefined();
  });
});

describe('checkMessage', () => {
  it.each([...TAKEN, ...OTHERS])('gives what the SDK gives for %s', (line) => {
    const ours = outcome(() => checkMessage(JSON.parse(line)));
    expect(ours).toStrictEqual(outcome(() => deserializeMessage(line)));
  });

  it('rebuilds the server description in the schema order, its _meta first', () => {
    const message = checkMessage(JSON.parse(TAKEN[2]));
    expect(JSON.stringify(message)).toBe(
      `{"jsonrpc":"2.0","id":"a-1","result":{"_meta":{"${INFO}":{"name":"n","title":"T","version":"2","websiteUrl":"https://x","description":"d"}},"content":[]}}`,
    );
  });
});
