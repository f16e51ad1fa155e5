import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importSqliteHistory } from '../../src/store/redis-import.js';
import { openRedisRunStore, type RedisRunStore } from '../../src/store/redis-run-store.js';
import { RedisSyncClient } from '../../src/store/redis-sync-client.js';
import { SqliteRunStore } from '../../src/store/sqlite-run-store.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { describeRunStoreContract, other, owner, run, save, step } from '../helpers/run-store-contract.js';

let server: RedisServer;
let namespaces = 0;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

function tempArtifacts(): string {
  return mkdtempSync(join(tmpdir(), 'runner-redis-store-'));
}

describeRunStoreContract('SqliteRunStore', () => {
  const artifacts = tempArtifacts();
  return { artifacts, open: () => new SqliteRunStore(artifacts) };
});

describeRunStoreContract('RedisRunStore', () => {
  const artifacts = tempArtifacts();
  const namespace = `contract-${process.pid}-${namespaces++}`;
  // No copy of a local history: the contract starts from an empty store (the copy has a test of its own below).
  return { artifacts, open: () => openRedisRunStore(server.url, { artifacts, namespace, importLocalHistory: false }) };
});

describe('RedisRunStore', () => {
  const id = '20260101-000000-000-aaaa';

  it('keeps every key under its project prefix, so two projects share one Redis without seeing each other', () => {
    const artifacts = tempArtifacts();
    const first = openRedisRunStore(server.url, { artifacts, namespace: '/projects/one' });
    const second = openRedisRunStore(server.url, { artifacts, namespace: '/projects/two' });
    const redis = new RedisSyncClient(server.url);
    try {
      save(first, run(id));
      expect(second.listRuns()).toEqual([]);
      expect(second.getRun(id)).toBeUndefined();
      expect(first.keys.prefix).toMatch(/^runner:\{[0-9a-f]{16}\}:$/);
      const keys = redis.call('keys', `${first.keys.prefix}*`) as string[];
      expect(keys).toContain(`${first.keys.prefix}run:${id}`);
      expect(redis.call('keys', `${second.keys.prefix}run:*`)).toEqual([]);
    } finally {
      for (const handle of [first, second, redis]) handle.close();
    }
  });

  it('stores a large string as chunks of at most 1 MiB, writes it once while unchanged, and deletes them with the run', () => {
    const artifacts = tempArtifacts();
    const store = openRedisRunStore(server.url, { artifacts, namespace: `chunks-${process.pid}` });
    const redis = new RedisSyncClient(server.url);
    try {
      const text = 'x'.repeat(3_000_000);
      const a = { ...step('a', 'succeeded'), text, outputs: { nested: [text] } };
      save(store, run(id, 'wf', 'running', [a]));
      const index = redis.call('hgetall', store.keys.largeValues(id)) as Record<string, string>;
      expect(Object.values(index)).toEqual(['-1:a']); // text and outputs share one value
      const valueId = Object.keys(index)[0]!;
      const chunks = redis.call('lrange', store.keys.chunks(id, valueId), 0, -1) as string[];
      expect(chunks.map((chunk) => chunk.length - 1)).toEqual([1024 * 1024, 1024 * 1024, 3_000_000 - 2 * 1024 * 1024]);
      expect((redis.call('hget', store.keys.steps(id), 'a') as string).length).toBeLessThan(1000);

      store.write({ runId: id, steps: [{ position: 0, record: { ...a, attempts: 2 } }] });
      expect(Object.keys(redis.call('hgetall', store.keys.largeValues(id)) as object)).toEqual([valueId]); // not written again

      store.deleteRuns([id]);
      expect(redis.call('keys', `${store.keys.prefix}*${id}*`)).toEqual([]);
      expect(redis.call('zcard', store.keys.allRuns)).toBe(0);
    } finally {
      store.close();
      redis.close();
    }
  });

  it('copies the SQLite history and older run folders once, keeping the owner and open intents of a run still running', () => {
    const artifacts = tempArtifacts();
    const namespace = `import-${process.pid}`;
    const folder = join(artifacts, 'wf', '20251231-000000-000-dddd');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'run.json'), JSON.stringify(run('20251231-000000-000-dddd')));
    const sqlite = new SqliteRunStore(artifacts);
    save(sqlite, run(id, 'wf', 'succeeded'));
    const running = id.replace('aaaa', 'bbbb');
    save(sqlite, run(running, 'wf', 'running', [step('a', 'running')]), other);
    const intent = { id: 'i1', runId: running, stepId: 'a', item: null, attempt: 1, uses: 'app.send', sentAt: '2026-01-01T00:00:01.000Z' };
    sqlite.write({ runId: running, intents: [intent] });
    sqlite.close();

    const redis = openRedisRunStore(server.url, { artifacts, namespace });
    try {
      expect(redis.listRuns().map((r) => r.id)).toEqual([running, id, '20251231-000000-000-dddd']);
      expect(redis.getRun('20251231-000000-000-dddd')!.imported).toBe(true);
      const reference = new SqliteRunStore(artifacts);
      expect(redis.getRun(running)).toEqual(reference.getRun(running));
      reference.close();
      expect(redis.unfinishedRuns()[0]!.owner).toMatchObject({ host: 'there', pid: 2 });
      expect(redis.openIntents(running)).toEqual([intent]);
    } finally {
      redis.close();
    }
    const later = new SqliteRunStore(artifacts);
    save(later, run('20260102-000000-000-cccc'));
    later.close();
    const again = openRedisRunStore(server.url, { artifacts, namespace });
    const local = new SqliteRunStore(artifacts);
    try {
      expect(again.listRuns()).toHaveLength(3); // copied once only
      expect(importSqliteHistory(again, local, owner)).toBe(0);
    } finally {
      again.close();
      local.close();
    }
  });

  it('lets only one of two machines take over a run when both find its owner dead at the same time', () => {
    const artifacts = tempArtifacts();
    const namespace = `race-${process.pid}`;
    const first = openRedisRunStore(server.url, { artifacts, namespace });
    const second = openRedisRunStore(server.url, { artifacts, namespace });
    const third: typeof owner = { host: 'elsewhere', pid: 3, started: null, heartbeatMs: 0 };
    try {
      save(first, run(id, 'wf', 'running'), other);
      const seen: string[] = [];
      // While the first machine decides that `other` is dead, the second takes the run: the first must see that and back off.
      const claim = first.claimRun(id, owner, (holder) => {
        seen.push(holder.host);
        if (holder.host === 'there') expect(second.claimRun(id, third, () => false)).toEqual({ claimed: true });
        return holder.host !== 'there';
      });
      expect(seen).toEqual(['there', 'elsewhere']);
      expect(claim).toEqual({ claimed: false, holder: expect.objectContaining({ host: 'elsewhere', pid: 3 }) });
      expect(first.unfinishedRuns()[0]!.owner).toMatchObject({ host: 'elsewhere' });
    } finally {
      first.close();
      second.close();
    }
  });

  it('says what durability the server gives, and refuses to open without fsync when asked to', () => {
    const store = openRedisRunStore(server.url, { artifacts: tempArtifacts(), namespace: 'durability' });
    try {
      expect(store.durability).toMatchObject({ aof: false, fsyncedWrites: false, summary: 'appendonly no' });
    } finally {
      store.close();
    }
    expect(() => openRedisRunStore(server.url, { artifacts: tempArtifacts(), namespace: 'durability', requireFsync: true })).toThrow(/does not fsync/);
  });

  it('gives each call its own reply: a late reply to a call that timed out is dropped', () => {
    const client = new RedisSyncClient(server.url, { timeoutMs: 100 });
    const busy = `local start = redis.call('TIME') repeat local now = redis.call('TIME') until (now[1] - start[1]) * 1000000 + (now[2] - start[2]) > 400000 return 'late'`;
    /** Calls until a reply comes within the 100 ms (the first call also starts the worker and connects). */
    const callUntilAnswered = (...command: [string, ...string[]]) => {
      for (;;) {
        try {
          return client.call(...command);
        } catch {
          // no reply yet: the next call waits again
        }
      }
    };
    try {
      callUntilAnswered('set', 'runner-test:late', 'mine');
      expect(() => client.call('eval', busy, '0')).toThrow(/no reply from Redis within 100 ms/);
      expect(callUntilAnswered('get', 'runner-test:late')).toBe('mine'); // not the script's late 'late'
    } finally {
      client.close();
    }
  });

  it('keeps each client its own connection on the one thread they share: closing one leaves the others working', () => {
    const first = new RedisSyncClient(server.url);
    const second = new RedisSyncClient(server.url);
    try {
      first.call('set', 'runner-test:shared', 'one');
      second.call('client', 'setname', 'second');
      expect(first.call('client', 'getname')).toBeNull(); // not the same connection
      first.close();
      expect(() => first.call('ping')).toThrow(/closed/);
      expect(second.call('get', 'runner-test:shared')).toBe('one');
      const third = new RedisSyncClient(server.url);
      try {
        expect(third.call('ping')).toBe('PONG');
      } finally {
        third.close();
      }
      expect(second.call('client', 'getname')).toBe('second');
    } finally {
      first.close();
      second.close();
    }
  });

  it('fails at once after a command gave up on a Redis that went away, and works again once it is back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-redis-away-'));
    let away = await startRedisServer({ dir });
    // 3 s: each command waits through two reconnects before it gives up.
    const client = new RedisSyncClient(away.url, { timeoutMs: 3_000 });
    try {
      expect(client.call('ping')).toBe('PONG');
      await away.stop();
      expect(() => client.call('ping')).toThrow(expect.objectContaining({ code: 'storage', message: expect.stringMatching(/Redis could not be reached \(gave up after 2 reconnect attempts\)|no reply/) }));
      // Without waiting through the reconnects again: the connection is still down.
      expect(() => client.call('ping')).toThrow(expect.objectContaining({ code: 'storage', message: expect.stringContaining('Redis is still unreachable') }));
      away = await startRedisServer({ dir, port: away.port });
      let answer: unknown;
      for (let tries = 0; tries < 200 && answer !== 'PONG'; tries++) {
        try {
          answer = client.call('ping');
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 50)); // ioredis reconnects by itself, up to 1 s apart
        }
      }
      expect(answer).toBe('PONG');
    } finally {
      client.close();
      await away.stop();
    }
  });

  it('fails with a storage error, not a hang, when Redis cannot be reached', () => {
    expect(() => openRedisRunStore('redis://127.0.0.1:1', { artifacts: tempArtifacts(), timeoutMs: 1_500 })).toThrow(
      expect.objectContaining({ code: 'storage' }),
    );
  });

  it('loses no acknowledged run or intent when Redis restarts with AOF and appendfsync always', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-redis-aof-'));
    const args = ['--appendonly', 'yes', '--appendfsync', 'always'];
    let aof = await startRedisServer({ dir, args });
    const artifacts = tempArtifacts();
    let store: RedisRunStore | undefined = openRedisRunStore(aof.url, { artifacts, namespace: 'aof', requireFsync: true });
    try {
      expect(store.durability).toMatchObject({ aof: true, appendfsync: 'always', fsyncedWrites: true });
      save(store, run(id, 'wf', 'running', [step('a', 'running')]), owner);
      const intent = { id: 'i1', runId: id, stepId: 'a', item: null, attempt: 1, uses: 'app.send', sentAt: '2026-01-01T00:00:01.000Z' };
      store.write({ runId: id, intents: [intent] }, { durable: true });
      store.close();
      store = undefined;
      await aof.stop('SIGKILL'); // no shutdown save: only what the AOF has survives
      aof = await startRedisServer({ dir, port: aof.port, args });
      store = openRedisRunStore(aof.url, { artifacts, namespace: 'aof' });
      expect(store.getRun(id)!.steps[0]!.record.status).toBe('running');
      expect(store.openIntents(id)).toEqual([intent]);
    } finally {
      store?.close();
      await aof.stop();
    }
  });
});
