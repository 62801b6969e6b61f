import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import { uniqueId } from '../support/env.js';

const cleanup = await import('../../scripts/test-cleanup.mjs');

/**
 * What a jest run's teardown removes (scripts/test-cleanup.mjs): the keys and databases of its tag,
 * nothing of another run's. Here a made-up tag stands for a finished run, another for a run going on.
 */
describe("a test run's leftovers", () => {
  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390';
  const mongoUri = process.env.TEST_MONGODB_URI ?? 'mongodb://127.0.0.1:27028/';
  // Both start with this run's own tag, so its teardown removes whatever a failed assertion left.
  const done = `${uniqueId()}d`;
  const other = `${uniqueId()}o`;
  let redis: Redis;
  let mongo: MongoClient;
  beforeAll(async () => {
    redis = new Redis(redisUrl);
    mongo = await MongoClient.connect(mongoUri);
  });
  afterAll(async () => {
    await redis.del(`test:${other}:kept`);
    await mongo.db(`tc_${other}`).dropDatabase();
    redis.disconnect();
    await mongo.close();
  });

  it("removes the finished run's prefixed and hash-tagged keys, and keeps another run's", async () => {
    await redis.set(`test:${done}:actors:epoch`, '1');
    await redis.hset(`test:${done}a:presence:u1`, 'c', '1');
    await redis.set(`{test:${done}:bull}:media:id`, '7');
    await redis.set(`test:${other}:kept`, '1');
    expect(await cleanup.dropRunKeys(redisUrl, done)).toBe(3);
    expect(
      await redis.exists(`test:${done}:actors:epoch`, `test:${done}a:presence:u1`, `{test:${done}:bull}:media:id`),
    ).toBe(0);
    expect(await redis.get(`test:${other}:kept`)).toBe('1');
  });

  it("drops the finished run's catalogue and tenant databases, and keeps another run's", async () => {
    for (const name of [`tc_${done}`, `tt_${done}_acme`, `tc_${other}`])
      await mongo.db(name).collection('c').insertOne({ at: new Date() });
    expect(await cleanup.dropRunDatabases(mongoUri, done)).toBe(2);
    const { databases } = await mongo.db('admin').admin().listDatabases({ nameOnly: true });
    const names = databases.map((d) => d.name);
    expect(names).not.toContain(`tc_${done}`);
    expect(names).not.toContain(`tt_${done}_acme`);
    expect(names).toContain(`tc_${other}`);
  });
});
