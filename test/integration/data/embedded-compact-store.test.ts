import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import path from 'node:path';
import { dedicated, type DedicatedService } from '../../support/dedicated-services.js';

/**
 * The embedded default's `compactStore` command (decision 1181): after a large collection is dropped,
 * the chunks its pages shared with the collections that stay are sparse; the command rewrites what
 * stayed in them now, so the writes that follow do not pay for it, and every document of the
 * collections that stay reads back. The test server (memory) has no store and refuses the command.
 */
/** The store's retention time for this server: chunks younger than it are not rewritten (H2's rule; 45 s by default). */
const RETENTION_MS = 4000;

describe('embedded default: compactStore', () => {
  let server: DedicatedService;
  let client: MongoClient;

  beforeAll(async () => {
    // @ts-expect-error plain ESM script without types
    const { mongoJavaServerCommand } = await import('../../../scripts/services.mjs');
    server = await dedicated(
      'mongo-java-server',
      'mongodb',
      (port, dir) =>
        mongoJavaServerCommand('h2', port, path.join(dir, 'data.mv'), [`-Dmongo.h2.retentionMs=${RETENTION_MS}`]) as [
          string,
          string[],
        ],
    );
    client = await new MongoClient(`${server.url}/`, { serverSelectionTimeoutMS: 60_000 }).connect();
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await server?.destroy();
  });

  it('rewrites the sparse chunks a dropped collection left, and keeps every document that stays', async () => {
    const db = client.db('compact');
    const kept = db.collection<{ _id: number; name: string; n: number }>('kept');
    const dropped = db.collection<{ _id: number; filler: string }>('dropped');
    await kept.createIndex({ name: 1 }, { unique: true });
    // Written alternately, so each commit's chunk holds pages of both collections.
    for (let b = 0; b < 20; b++) {
      await kept.insertMany(
        Array.from({ length: 250 }, (_, i) => ({ _id: b * 250 + i, name: `k${b * 250 + i}`, n: i })),
      );
      await dropped.insertMany(Array.from({ length: 250 }, (_, i) => ({ _id: b * 250 + i, filler: 'x'.repeat(2000) })));
    }
    await dropped.drop();
    const compact = () => client.db('admin').command({ compactStore: 1, targetFillRate: 90, maxMs: 60_000 });
    // Right after the writes every chunk is younger than the retention time: nothing is rewritten yet.
    const early = await compact();
    expect(early).toMatchObject({ ok: 1, steps: 0, retentionMs: RETENTION_MS });
    expect(early.msSinceLastWrite).toBeLessThan(RETENTION_MS);
    // The server said how long ago the last write was: past the retention time every chunk is old enough
    // (a rule of time, so the test waits for it).
    await new Promise((done) => setTimeout(done, RETENTION_MS - early.msSinceLastWrite + 50));
    const reply = await compact();
    expect(reply.ok).toBe(1);
    expect(reply.msSinceLastWrite).toBeGreaterThan(RETENTION_MS);
    expect(reply.chunksFillRateBefore).toBeLessThan(60);
    expect(reply.steps).toBeGreaterThan(0);
    // Nothing is left to rewrite (the chunks emptied are freed once they too are older than the retention time).
    expect(await compact()).toMatchObject({ ok: 1, steps: 0 });
    // What stays reads back whole, by its `_id` and by its unique index, now and after a restart (from the file).
    const check = async (c: MongoClient) => {
      const k = c.db('compact').collection<{ _id: number; name: string; n: number }>('kept');
      expect(await k.countDocuments()).toBe(5000);
      expect(await k.findOne({ _id: 4321 })).toEqual({ _id: 4321, name: 'k4321', n: 4321 % 250 });
      expect(await k.findOne({ name: 'k17' })).toEqual({ _id: 17, name: 'k17', n: 17 });
      await expect(k.insertOne({ _id: 99_999, name: 'k17', n: 0 })).rejects.toMatchObject({ code: 11000 });
      expect((await c.db('compact').listCollections().toArray()).map((x) => x.name)).toEqual(['kept']);
    };
    await check(client);
    await client.close();
    await server.stop();
    await server.start();
    client = await new MongoClient(`${server.url}/`, { serverSelectionTimeoutMS: 60_000 }).connect();
    await check(client);
    // Nothing left to rewrite: the command answers at once, having taken no step.
    expect(await client.db('admin').command({ compactStore: 1 })).toMatchObject({ ok: 1, steps: 0 });
  }, 120_000);

  it('is refused by the test server, which keeps nothing on disk', async () => {
    const test = await new MongoClient(process.env.TEST_MONGODB_URI ?? 'mongodb://127.0.0.1:27027/', {
      serverSelectionTimeoutMS: 30_000,
    }).connect();
    try {
      await expect(test.db('admin').command({ compactStore: 1 })).rejects.toMatchObject({ code: 59 });
    } finally {
      await test.close();
    }
  });
});
