import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { EnvelopeOutbox } from '../../../src/actors/runtime/envelope-outbox.js';
import { createRedis, type RedisClient } from '../../../src/data/redis.js';

/**
 * The envelopes a node sends to another node's list (decision 1142): the first of a loop turn leaves at
 * once, the rest of the turn's together in its check phase, each list's values in the order sent.
 */
describe('envelope outbox', () => {
  let redis: RedisClient;
  beforeAll(() => {
    redis = createRedis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390', 'outbox-test');
  });
  afterAll(async () => {
    await redis.quit();
  });

  /** Script calls that wrote to `key` (the outbox's only command), counted on the real client. */
  function writesTo(key: string) {
    const spy = jest.spyOn(redis, 'evalsha');
    return {
      count: () => spy.mock.calls.filter((c) => c.includes(key)).length,
      restore: () => spy.mockRestore(),
    };
  }

  it("writes a lone envelope before the loop turn ends (on a microtask), not at the turn's end", async () => {
    const key = `test:outbox:${randomUUID()}`;
    const outbox = new EnvelopeOutbox(redis, 10_000);
    const writes = writesTo(key);
    try {
      const sent = outbox.send(key, { n: 1 });
      await Promise.resolve();
      await Promise.resolve();
      expect(writes.count()).toBe(1);
      await sent;
      expect(await redis.lrange(key, 0, -1)).toEqual(['{"n":1}']);
    } finally {
      writes.restore();
      await redis.del(key);
    }
  });

  it("sends the envelopes of one loop turn's callbacks in two script calls, in order, each delivered once", async () => {
    const key = `test:outbox:${randomUUID()}`;
    const other = `test:outbox:${randomUUID()}`;
    const outbox = new EnvelopeOutbox(redis, 10_000);
    const writes = writesTo(key);
    try {
      // Eight callbacks of one check phase, as the poll of eight hub connections' frames would be.
      const sent = await new Promise<Promise<void>[]>((resolve) => {
        const all: Promise<void>[] = [];
        for (let n = 1; n <= 8; n++)
          setImmediate(() => {
            all.push(outbox.send(key, { n }));
            if (n === 4) all.push(outbox.send(other, { n }));
            if (n === 8) resolve(all);
          });
      });
      await Promise.all(sent);
      // The first leaves at once; the seven sent after it in the same turn, in one call.
      expect(writes.count()).toBe(2);
      const popped = (await redis.call('LMPOP', 1, key, 'RIGHT', 'COUNT', 100)) as [string, string[]];
      expect(popped[1].map((v) => (JSON.parse(v) as { n: number }).n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(await redis.lrange(other, 0, -1)).toEqual(['{"n":4}']);
      expect(await redis.pttl(other)).toBeGreaterThan(0);
    } finally {
      writes.restore();
      await redis.del(key, other);
    }
  });

  it('rejects the waiters of a batch Redis refused, and later sends still go out', async () => {
    const key = `test:outbox:${randomUUID()}`;
    const outbox = new EnvelopeOutbox(redis, 10_000);
    await redis.set(key, 'not a list');
    try {
      const a = outbox.send(key, { n: 1 });
      const b = new Promise<void>((resolve, reject) =>
        setImmediate(() => outbox.send(key, { n: 2 }).then(resolve, reject)),
      );
      await expect(a).rejects.toThrow(/WRONGTYPE/);
      await expect(b).rejects.toThrow(/WRONGTYPE/);
      await redis.del(key);
      await outbox.send(key, { n: 3 });
      expect(await redis.lrange(key, 0, -1)).toEqual(['{"n":3}']);
    } finally {
      await redis.del(key);
    }
  });
});
