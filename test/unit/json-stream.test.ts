import { describe, expect, it } from 'vitest';
import { JsonStreamParser, type JsonPath, type StringSink } from '../../src/apps/json-stream.js';

// The incremental parser must build exactly what JSON.parse builds from the
// whole text, wherever the chunks split it, and reject what JSON.parse rejects.

/** A canonical form that tells apart what toEqual would not: key order, -0, own `__proto__` keys. */
function describeValue(value: unknown): string {
  return JSON.stringify(value, (_key, item) => (Object.is(item, -0) ? '<-0>' : item));
}

/** Parses `bytes` fed in the given chunks. */
function parseChunks(chunks: Buffer[], parser = new JsonStreamParser()): unknown {
  for (const chunk of chunks) parser.write(chunk);
  return parser.end();
}

/** Splits `bytes` at the given positions. */
function splitAt(bytes: Buffer, cuts: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    chunks.push(bytes.subarray(from, cut));
    from = cut;
  }
  chunks.push(bytes.subarray(from));
  return chunks;
}

function bytesOf(bytes: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

/** A seeded generator, so a failure can be replayed. */
function createRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

const CORPUS: string[] = [
  '0',
  '-0',
  '  -12.5e-3 ',
  '1e400',
  '-1E+2',
  '123456789012345678901234567890',
  '9007199254740993',
  '0.1',
  '1.7976931348623157e308',
  '5e-324',
  'true',
  ' false',
  'null ',
  '""',
  '"plain"',
  '[]',
  '{}',
  '[[],{},[{}],{"a":[]}]',
  '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
  '{"b":1,"a":2,"10":3,"2":4,"-1":5}',
  '{"a":1,"b":2,"a":3}',
  '{"__proto__":{"polluted":true},"x":1}',
  '{"__proto__":1,"__proto__":2}',
  '{"constructor":{"prototype":1},"hasOwnProperty":2}',
  '"escapes: \\" \\\\ \\/ \\b \\f \\n \\r \\t"',
  '"\\u0000\\u001f\\u0041\\u00e9\\u20AC\\uFFFF"',
  '"pair \\ud83d\\ude00 and reversed \\ude00\\ud83d, lone \\ud800 and \\udc00 at end \\ud83d"',
  '"\\ud83d\\ud83d\\ude00"',
  '"raw UTF-8: é ß 日本語 😀 🏳️‍🌈"',
  '"mixed é\\u00e9é\\n😀\\ud83d\\ude00😀"',
  '{"é":"日本","😀":["\\u00e9", "ü"]}',
  ' \t\r\n[ 1 , 2 ,\r\n 3 ] \r\n',
  '{"a" : { "b" : [ { "c" : null } ] } }',
  '[1,-1,0,-0,1.5,-1.5e10,1E-7,100]',
  '{"nested":' + '['.repeat(50) + '"deep"' + ']'.repeat(50) + '}',
  JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'hello\nworld "quoted" \\ back' }], isError: false } }),
  JSON.stringify({ long: 'x'.repeat(70_000), escaped: '\n'.repeat(5000), unicode: 'é😀'.repeat(30_000) }),
  // As Python's json.dumps writes by default (ensure_ascii): every non-ASCII character escaped, past one scratch buffer.
  JSON.stringify({ s: 'é日😀\ud800 a\u0000'.repeat(5000) }).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`),
];

const INVALID: string[] = [
  '',
  ' ',
  '{',
  '[',
  '[1,]',
  '[,1]',
  '{"a":1,}',
  '{,}',
  '{"a"}',
  '{"a":}',
  '{a:1}',
  "{'a':1}",
  '"unterminated',
  '"bad escape \\x"',
  '"bad unicode \\u12g4"',
  '"short unicode \\u12"',
  '"raw\ttab"',
  '"raw\nnewline"',
  '01',
  '-',
  '1.',
  '.5',
  '+1',
  '1e',
  '1e+',
  '--1',
  'NaN',
  'Infinity',
  'tru',
  'nul',
  'truex',
  'true false',
  '[1] [2]',
  '{}}',
  '[]]',
  '"a" "b"',
  '\u00a0[]',
  '\ufeff{}',
  '{"a":1}x',
  '[1 2]',
  '{"a" 1}',
  '{"a":1 "b":2}',
];

describe('JsonStreamParser', () => {
  it('builds what JSON.parse builds, split into two chunks at every position', () => {
    for (const text of CORPUS) {
      const bytes = Buffer.from(text);
      const expected = describeValue(JSON.parse(text));
      // Every cut of the small texts; 60 spread over each long one (every cut of them would take minutes;
      // their cuts all fall inside long strings, which the random splits below cut too).
      const step = bytes.length > 10_000 ? Math.floor(bytes.length / 60) : 1;
      for (let cut = 0; cut <= bytes.length; cut += step) {
        expect(describeValue(parseChunks(splitAt(bytes, [cut]))), `${text.slice(0, 40)} cut at ${cut}`).toBe(expected);
      }
    }
  });

  it('builds what JSON.parse builds from 1-byte chunks and from random splits', () => {
    const random = createRandom(42);
    for (const text of CORPUS) {
      const bytes = Buffer.from(text);
      const expected = describeValue(JSON.parse(text));
      expect(describeValue(parseChunks(bytesOf(bytes, 1))), `${text.slice(0, 40)} in 1-byte chunks`).toBe(expected);
      for (let round = 0; round < 20; round++) {
        const cuts = Array.from({ length: 1 + Math.floor(random() * 8) }, () => Math.floor(random() * (bytes.length + 1)));
        expect(describeValue(parseChunks(splitAt(bytes, cuts))), `${text.slice(0, 40)} cut at ${cuts}`).toBe(expected);
      }
    }
  });

  it('keeps __proto__ as an own data property, as JSON.parse does, and never touches the prototype', () => {
    const parsed = parseChunks([Buffer.from('{"__proto__":{"polluted":true}}')]) as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps the position of a repeated key where it was first seen, with the last value', () => {
    const parsed = parseChunks([Buffer.from('{"a":1,"b":2,"a":3}')]) as Record<string, unknown>;
    expect(Object.entries(parsed)).toEqual([['a', 3], ['b', 2]]);
  });

  it('decodes multibyte characters split across chunks, and broken UTF-8 as Buffer#toString does', () => {
    const texts = [
      Buffer.from('"日本😀é"'),
      Buffer.from([0x22, 0xe2, 0x82, 0x22]), // a character cut short by the closing quote
      Buffer.from([0x22, 0xe2, 0x82, 0x5c, 0x6e, 0x22]), // ... by an escape
      Buffer.from([0x22, 0xff, 0x41, 0xc3, 0x22]),
      Buffer.from([0x22, 0xf0, 0x9f, 0x98, 0x22]),
      Buffer.from([0x22, 0xe2, 0x82, 0x5c, 0x75, 0x30, 0x30, 0x41, 0x43, 0x22]),
    ];
    for (const bytes of texts) {
      const expected = JSON.parse(bytes.toString('utf8'));
      for (let cut = 0; cut <= bytes.length; cut++) expect(parseChunks(splitAt(bytes, [cut])), `${bytes.toString('hex')} cut at ${cut}`).toBe(expected);
      expect(parseChunks(bytesOf(bytes, 1))).toBe(expected);
    }
  });

  it('rejects what JSON.parse rejects, with a SyntaxError, whole or byte by byte', () => {
    for (const text of INVALID) {
      expect(() => JSON.parse(text), text).toThrow(SyntaxError);
      const bytes = Buffer.from(text);
      expect(() => parseChunks([bytes]), `${JSON.stringify(text)} whole`).toThrow(SyntaxError);
      expect(() => parseChunks(bytesOf(bytes, 1)), `${JSON.stringify(text)} byte by byte`).toThrow(SyntaxError);
    }
  });

  it('rejects a raw control character in a string that spans chunks', () => {
    const bytes = Buffer.from(`"${'a'.repeat(100_000)}\u0001"`);
    expect(() => parseChunks(bytesOf(bytes, 65_536))).toThrow(SyntaxError);
  });

  it('parses deep nesting without recursion', () => {
    for (const depth of [1000, 100_000]) {
      const arrays = '['.repeat(depth) + '1' + ']'.repeat(depth);
      let value = parseChunks(bytesOf(Buffer.from(arrays), 4096));
      for (let level = 0; level < depth; level++) value = (value as unknown[])[0];
      expect(value).toBe(1);
      const objects = '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth);
      let object = parseChunks(bytesOf(Buffer.from(objects), 4096));
      let levels = 0;
      for (; levels < depth && Object.keys(object as object).join() === 'a'; levels++) object = (object as { a: unknown }).a;
      expect(levels).toBe(depth);
      expect(object).toBeNull();
    }
  });

  it('parses a 60 MB string from 64 KiB chunks into one string', () => {
    const bytes = Buffer.from(JSON.stringify({ text: 'x'.repeat(60_000_000) }));
    const parsed = parseChunks(bytesOf(bytes, 65_536)) as { text: string };
    expect(parsed.text.length).toBe(60_000_000);
    expect(parsed.text.startsWith('xxx') && parsed.text.endsWith('xxx')).toBe(true);
  });

  it('hands a long string value to a sink by its path, keys and short strings never', () => {
    const asked: JsonPath[] = [];
    const written: string[] = [];
    const sink: StringSink = { write: (piece) => written.push(piece), end: () => 'TOKEN' };
    const parser = new JsonStreamParser({
      sinkAfterChars: 1000,
      openSink: (path) => {
        asked.push(path);
        return path.at(-1) === 'data' ? sink : undefined;
      },
    });
    const long = 'A'.repeat(5000);
    const text = JSON.stringify({ result: { content: [{ type: 'text', text: 'short' }, { type: 'image', data: long, other: long }], ['k'.repeat(2000)]: 1 } });
    const parsed = parseChunks(bytesOf(Buffer.from(text), 300), parser) as { result: { content: { data?: string; other?: string }[] } };
    expect(asked).toEqual([
      ['result', 'content', 1, 'data'],
      ['result', 'content', 1, 'other'],
    ]);
    expect(parsed.result.content[1]!.data).toBe('TOKEN');
    expect(parsed.result.content[1]!.other).toBe(long);
    expect(written.join('')).toBe(long);
  });
});
