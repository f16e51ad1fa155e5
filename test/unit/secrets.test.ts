import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppConnection } from '../../src/apps/connection.js';
import { VerdictStore } from '../../src/apps/verdicts.js';
import type { RunRecord } from '../../src/artifacts/run-record.js';
import { saveResult } from '../../src/artifacts/save-result.js';
import type { SecretEntry } from '../../src/config/types.js';
import { createStreamMasker, maskRunRecord, maskSecrets, maskSecretsDeep, maskToolResult, replaceSecrets } from '../../src/secrets.js';

/** Feeds `parts` through a fresh stream masker and returns everything it emitted. */
function streamThrough(parts: readonly string[], secrets: readonly string[]): string {
  const masker = createStreamMasker(secrets);
  return parts.map((part) => masker.push(part)).join('') + masker.end();
}

describe('maskSecrets', () => {
  it('masks the raw value and its JSON-escaped form', () => {
    const secret = 'a"b\\c';
    const json = JSON.stringify({ token: secret });
    expect(json).toContain('a\\"b\\\\c');
    expect(maskSecrets(json, [secret])).toBe('{"token":"***"}');
    expect(maskSecrets(`raw ${secret} end`, [secret])).toBe('raw *** end');
  });

  it('masks control characters and non-ASCII as JSON, Python and Go write them', () => {
    const lines = 'line1\nline2';
    expect(maskSecrets(JSON.stringify({ v: lines }), [lines])).toBe('{"v":"***"}');
    const accented = 'pässwörd';
    expect(maskSecrets('{"v": "p\\u00e4ssw\\u00f6rd"}', [accented])).toBe('{"v": "***"}');
    const html = 'a<b&c';
    expect(maskSecrets('{"v":"a\\u003cb\\u0026c"}', [html])).toBe('{"v":"***"}');
  });

  it('masks a longer secret whole before a part of it', () => {
    expect(maskSecrets('key=abcdef', ['abc', 'abcdef'])).toBe('key=***');
    // Overlapping secrets leave no fragment of either showing.
    expect(maskSecrets('xabcdefy', ['abcd', 'cdef'])).toBe('x***y');
  });

  it('returns the very same string when no secret occurs', () => {
    const text = 'nothing to see here';
    expect(maskSecrets(text, [])).toBe(text);
    expect(maskSecrets(text, ['sk-1234'])).toBe(text);
  });

  it('follows a secret list changed in place', () => {
    const secrets = ['first'];
    expect(maskSecrets('first second', secrets)).toBe('*** second');
    secrets[0] = 'second';
    expect(maskSecrets('first second', secrets)).toBe('first ***');
  });

  it('masks strings deep inside a value and keeps the keys', () => {
    expect(maskSecretsDeep({ tok: ['tok', { tok: 'x tok' }], n: 1 }, ['tok'])).toEqual({ tok: ['***', { tok: 'x ***' }], n: 1 });
  });
});

describe('replaceSecrets', () => {
  const entries: SecretEntry[] = [
    { name: 'API_KEY', value: 'sk-1234' },
    { name: 'QUOTED', value: 'p"w' },
  ];
  const tag = (entry: SecretEntry, form: 'raw' | 'json') => `<${entry.name}:${form}>`;

  it('tells the callback which secret it found and in which form', () => {
    const text = `key sk-1234, raw p"w, in JSON ${JSON.stringify({ pw: 'p"w' })}`;
    expect(replaceSecrets(text, entries, tag)).toBe('key <API_KEY:raw>, raw <QUOTED:raw>, in JSON {"pw":"<QUOTED:json>"}');
  });

  it('replaces a longer secret before one inside it', () => {
    const nested: SecretEntry[] = [
      { name: 'SHORT', value: 'abc' },
      { name: 'LONG', value: 'abcdef' },
    ];
    expect(replaceSecrets('abcdef abc', nested, tag)).toBe('<LONG:raw> <SHORT:raw>');
  });

  it('does no work when nothing occurs', () => {
    const text = 'plain text';
    let calls = 0;
    expect(replaceSecrets(text, entries, () => String(++calls))).toBe(text);
    expect(replaceSecrets(text, [], () => String(++calls))).toBe(text);
    expect(calls).toBe(0);
  });
});

describe('createStreamMasker', () => {
  const secret = 'sk-1234';

  it('masks a secret split across two chunks, at every split', () => {
    const text = `token=${secret};`;
    for (let cut = 0; cut <= text.length; cut++) {
      const out = streamThrough([text.slice(0, cut), text.slice(cut)], [secret]);
      expect(out, `cut at ${cut}`).toBe('token=***;');
    }
  });

  it('masks a secret split across three chunks, at every pair of splits', () => {
    const text = `a${secret}b${secret}`;
    for (let first = 0; first <= text.length; first++) {
      for (let second = first; second <= text.length; second++) {
        const out = streamThrough([text.slice(0, first), text.slice(first, second), text.slice(second)], [secret]);
        expect(out, `cuts at ${first}, ${second}`).toBe('a***b***');
      }
    }
  });

  it('emits what cannot start a secret at once and holds back at most the rest', () => {
    const masker = createStreamMasker([secret]);
    expect(masker.push('ready\n')).toBe('ready\n');
    expect(masker.push('key sk-12')).toBe('key ');
    expect(masker.push('34 done')).toBe('*** done');
    expect(masker.push('x sk-123')).toBe('x ');
    expect(masker.end()).toBe('sk-123');
  });

  it('matches maskSecrets on the whole text, however the text is cut', () => {
    const secrets = ['ab"c', 'abcd', 'cdef', 'ee', 'zz', 'aaaa'];
    const text = `abcdef ee eee zzz ab"c ${JSON.stringify('ab"c')} abcdcdef zz-ee aaaaaaaaa aaa abcdef`;
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 1000; round++) {
      const parts: string[] = [];
      for (let at = 0; at < text.length; ) {
        const size = Math.floor(random() * 8);
        parts.push(text.slice(at, at + size));
        at += size;
      }
      expect(streamThrough(parts, secrets), parts.join('|')).toBe(maskSecrets(text, secrets));
    }
  });

  it('passes chunks through untouched when there are no secrets', () => {
    expect(streamThrough(['sk-12', '34'], [])).toBe('sk-1234');
  });

  it('masks 20 MB without a newline, written in 64 KiB chunks', () => {
    // 65,541 characters per unit, so the secrets fall on every offset of a chunk boundary over the run.
    const filler = 'lorem ipsum dolor '.repeat(3640);
    const unit = `${filler}ipsum-key ${secret}`;
    const input = unit.repeat(Math.ceil((20 * 1024 * 1024) / unit.length));
    const expected = `${filler}*** ***`.repeat(Math.ceil((20 * 1024 * 1024) / unit.length));
    const masker = createStreamMasker([secret, 'ipsum-key']);
    const out: string[] = [];
    for (let at = 0; at < input.length; at += 64 * 1024) out.push(masker.push(input.slice(at, at + 64 * 1024)));
    out.push(masker.end());
    const joined = out.join('');
    expect(joined.length).toBe(expected.length);
    expect(joined === expected).toBe(true);
  });
});

describe('maskRunRecord', () => {
  const record: RunRecord = {
    id: '20261130-080000-005-abcd',
    workflow: 'seeded',
    workflowFile: '/work/workflows/seeded.yaml',
    status: 'succeeded',
    trigger: { type: 'watch', event: 'add', path: '/in/invoice-2026.pdf', source: '/in/invoice-2026.pdf', time: '2026-11-30T08:00:00.000Z' },
    inputs: { year: '2026', shared: 'shared' },
    startedAt: '2026-11-30T08:00:00.005Z',
    endedAt: '2026-11-30T08:00:01.000Z',
    dir: '/artifacts/seeded/20261130-080000-005-abcd',
    apps: {},
    steps: [
      {
        id: 'seeded',
        uses: 'shared.created',
        status: 'succeeded',
        attempts: 2,
        startedAt: '2026-11-30T08:00:00.010Z',
        endedAt: '2026-11-30T08:00:00.900Z',
        args: { path: 'report-2026.txt' },
        outputs: { created: 'created 2026' },
        text: 'created for 2026',
        files: ['/artifacts/seeded/20261130-080000-005-abcd/seeded/shared.png'],
        policy: 'allow',
        error: null,
        history: [
          { attempt: 1, startedAt: '2026-11-30T08:00:00.010Z', endedAt: '2026-11-30T08:00:00.020Z', error: { kind: 'timeout', message: 'timed out in 2026' } },
          { attempt: 2, startedAt: '2026-11-30T08:00:00.030Z', endedAt: '2026-11-30T08:00:00.900Z', error: null },
        ],
        elicitations: [{ message: 'confirm 2026?', action: 'accept', answered: ['confirmed'], source: 'workflow' }],
        items: [
          {
            index: 0,
            status: 'failed',
            attempts: 1,
            args: { name: '2026' },
            outputs: null,
            text: 'failed 2026',
            files: ['/artifacts/seeded/20261130-080000-005-abcd/seeded/0/used.png'],
            error: { kind: 'tool', message: 'tool reported 2026' },
            history: [],
          },
        ],
      },
    ],
    error: { message: 'step seeded failed in 2026' },
  };

  it('masks values and leaves ids, statuses, paths, keys and `uses` alone', () => {
    const before = JSON.stringify(record);
    const masked = maskRunRecord(record, ['2026', 'ed']);
    expect(JSON.stringify(record)).toBe(before); // the live record is not touched
    expect(masked.id).toBe(record.id);
    expect(masked.workflow).toBe('seeded');
    expect(masked.workflowFile).toBe(record.workflowFile);
    expect(masked.status).toBe('succeeded');
    expect(masked.dir).toBe(record.dir);
    expect(masked.startedAt).toBe(record.startedAt);
    const step = masked.steps[0]!;
    expect(step).toMatchObject({ id: 'seeded', uses: 'shared.created', status: 'succeeded', files: record.steps[0]!.files, startedAt: record.steps[0]!.startedAt });
    expect(step.items![0]).toMatchObject({ status: 'failed', files: record.steps[0]!.items![0]!.files });
    expect(step.history[0]!.startedAt).toBe('2026-11-30T08:00:00.010Z');
    expect(step.elicitations![0]!.answered).toEqual(['confirmed']);
    expect(masked.trigger).toMatchObject({ type: 'watch', event: 'add', time: '2026-11-30T08:00:00.000Z' });

    expect(masked.inputs).toEqual({ year: '***', shared: 'shar***' });
    expect(step.args).toEqual({ path: 'report-***.txt' });
    expect(step.outputs).toEqual({ created: 'creat*** ***' });
    expect(step.text).toBe('creat*** for ***');
    expect(step.history[0]!.error!.message).toBe('tim*** out in ***');
    expect(step.elicitations![0]!.message).toBe('confirm ***?');
    expect(step.items![0]).toMatchObject({ args: { name: '***' }, text: 'fail*** ***', error: { message: 'tool report*** ***' } });
    expect(masked.trigger.path).toBe('/in/invoice-***.pdf');
    expect(masked.trigger.source).toBe('/in/invoice-***.pdf');
    expect(masked.error!.message).toBe('step se*** fail*** in ***');
  });

  it('masks a secret found in one place only there, and leaves the live record as it was', () => {
    const before = JSON.stringify(record);
    const masked = maskRunRecord(record, ['for 2026', 'in 2026']);
    expect(JSON.stringify(record)).toBe(before);
    const step = masked.steps[0]!;
    expect(step.text).toBe('created ***');
    expect(step.history.map((attempt) => attempt.error?.message ?? null)).toEqual(['timed out ***', null]);
    expect(masked.error!.message).toBe('step seeded failed ***');
    expect(step.items).toEqual(record.steps[0]!.items);
    expect(step.args).toEqual(record.steps[0]!.args);
    expect(step.elicitations).toEqual(record.steps[0]!.elicitations);
    expect(JSON.stringify(maskRunRecord(record, ['nowhere']))).toBe(before);
  });

  it('returns the record itself when there are no secrets', () => {
    expect(maskRunRecord(record, [])).toBe(record);
  });
});

describe('maskToolResult', () => {
  it('masks text, structuredContent, resource text and _meta, never type, mimeType, file or uri', () => {
    const result = {
      content: [
        { type: 'text', text: 'token sk-1234' },
        { type: 'image', mimeType: 'image/sk-1234', file: 'sk-1234.png', bytes: 8 },
        { type: 'resource', resource: { uri: 'x://sk-1234/doc', mimeType: 'text/plain', text: 'doc sk-1234', _meta: { note: 'sk-1234' } } },
        { type: 'resource_link', uri: 'x://sk-1234', name: 'link', files: ['sk-1234.txt'], readError: 'denied sk-1234' },
      ],
      structuredContent: { key: 'sk-1234', 'sk-1234': 1 },
      _meta: { trace: 'sk-1234' },
      isError: false,
    };
    expect(maskToolResult(result, ['sk-1234'])).toEqual({
      content: [
        { type: 'text', text: 'token ***' },
        { type: 'image', mimeType: 'image/sk-1234', file: 'sk-1234.png', bytes: 8 },
        { type: 'resource', resource: { uri: 'x://sk-1234/doc', mimeType: 'text/plain', text: 'doc ***', _meta: { note: '***' } } },
        { type: 'resource_link', uri: 'x://sk-1234', name: 'link', files: ['sk-1234.txt'], readError: 'denied ***' },
      ],
      structuredContent: { key: '***', 'sk-1234': 1 },
      _meta: { trace: '***' },
      isError: false,
    });
  });
});

describe('maskToolResult and a field named __proto__', () => {
  it('keeps it as the own field JSON.parse made it, masked, and changes no prototype', () => {
    const result = JSON.parse('{"content":[{"type":"text","text":"x","__proto__":{"note":"sk-1234"}}],"__proto__":{"trace":"sk-1234"}}') as unknown;
    const masked = maskToolResult(result, ['sk-1234']) as Record<string, unknown> & { content: Record<string, unknown>[] };
    expect(Object.getPrototypeOf(masked)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(masked.content[0])).toBe(Object.prototype);
    expect(JSON.stringify(masked)).toBe('{"content":[{"type":"text","text":"x","__proto__":{"note":"***"}}],"__proto__":{"trace":"***"}}');
  });
});

describe('saveResult with secrets', () => {
  it('writes result.json masked and payload files as delivered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-secrets-'));
    const secret = 'sk-1234';
    const saved = await saveResult(
      dir,
      {
        content: [
          { type: 'text', text: `token ${secret}` },
          { type: 'resource', resource: { uri: 'x://files/blob.bin', mimeType: 'application/octet-stream', blob: Buffer.from(secret).toString('base64') } },
          { type: 'resource_link', uri: 'x://files/report.txt', name: 'report' },
        ],
        structuredContent: { token: secret },
      },
      async (uri) => ({ contents: [{ uri, mimeType: 'text/plain', text: `report ${secret}` }] }),
      undefined,
      [secret],
    );
    const stored = readFileSync(join(dir, 'result.json'), 'utf8');
    expect(stored).not.toContain(secret);
    expect(JSON.parse(stored).content[0].text).toBe('token ***');
    expect(saved.stored).toEqual(JSON.parse(stored));
    expect(readFileSync(join(dir, 'report.txt'), 'utf8')).toBe(`report ${secret}`);
    expect(readFileSync(join(dir, 'blob.bin'), 'utf8')).toBe(secret);
  });
});

describe('app stderr', () => {
  it('reaches the log file and the failure message masked, even written in pieces', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-stderr-'));
    const logFile = join(dir, 'app.log');
    // Not an MCP server: it writes the secret in two pieces, then dies.
    const script = "process.stderr.write('key sk-12'); setTimeout(() => { process.stderr.write('34 rejected\\nbye sk-1'); process.exit(1); }, 50);";
    const failure = await AppConnection.open({
      app: { name: 'leaky', transport: 'stdio', command: process.execPath, args: ['-e', script], env: {}, cwd: dir, roots: false },
      artifacts: dir,
      verdicts: new VerdictStore(null),
      logFile,
      secretValues: ['sk-1234'],
      connectTimeoutMs: 5_000,
    }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toContain('key *** rejected');
    expect(failure?.message).toContain('bye sk-1'); // a prefix that never completed is shown at the end
    const log = readFileSync(logFile, 'utf8');
    expect(log).not.toContain('sk-1234');
    expect(log).toContain('key *** rejected\nbye sk-1');
  });
});
