import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BSON, MongoClient, ObjectId } from 'mongodb';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { dedicated, type DedicatedService } from '../../support/dedicated-services.js';

type Doc = { _id: unknown; w: number; n: number };

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
/**
 * A file written by the launcher before decision 986 (H2's own key type): 600 documents with ids of
 * every kind the service writes, and a unique (w, n) index, with the documents it holds. Made once with
 * that launcher: writing it in the test, with H2's key type, met H2's own race on a fresh index map
 * (decision 986), which the launcher's key type does not have.
 */
const before = {
  file: () => gunzipSync(readFileSync(path.join(fixtures, 'embedded-h2-keys.mv.gz'))),
  docs: (): Doc[] =>
    BSON.EJSON.parse(gunzipSync(readFileSync(path.join(fixtures, 'embedded-h2-keys.docs.json.gz'))).toString(), {
      relaxed: false,
    }) as Doc[],
};

/**
 * The embedded default's unique indexes (the `_id` index included) open with the launcher's own key
 * type, which keeps each key's serialised bytes instead of making them again at every comparison. The
 * order must stay H2's own: a file written before (or read with `-Dmongo.h2.keyBytes=h2`, H2's key
 * type) is searched by binary search in that order, and a different one finds nothing. A file written
 * with H2's key type is read and written with the kept bytes, then read again after a restart (pages
 * from the file, not the cache); every key is found, every duplicate refused. Reading it back with
 * H2's key type (a downgrade) is not part of the suite: that step met H2's own race on its key type
 * ("Can not compare") in CI, on a server the launcher's key type does not use (decision 986).
 */
describe('embedded default: unique index keys read the same with the kept bytes as with H2’s key type', () => {
  let server: DedicatedService;

  beforeAll(async () => {
    // @ts-expect-error plain ESM script without types
    const { mongoJavaServerCommand } = await import('../../../scripts/services.mjs');
    server = await dedicated(
      'mongo-java-server',
      'mongodb',
      (port, dir) => mongoJavaServerCommand('h2', port, path.join(dir, 'data.mv')) as [string, string[]],
    );
  }, 180_000);
  afterAll(async () => server?.destroy());

  /** Ids of every kind the service writes: ObjectIds, strings of many lengths (natural keys), numbers. */
  const ids = (round: number): unknown[] =>
    Array.from({ length: 600 }, (_, i) =>
      i % 3 === 0
        ? new ObjectId()
        : i % 3 === 1
          ? `conf-${round}-${'x'.repeat(i % 17)}:${i * 7919}`
          : round * 1_000_000 + i * (i % 2 ? 1 : 65_537),
    );

  const withServer = async (use: (docs: ReturnType<typeof collection>) => Promise<void>) => {
    await server.start();
    const client = await new MongoClient(`${server.url}`, { serverSelectionTimeoutMS: 60_000 }).connect();
    try {
      await use(collection(client));
    } finally {
      await client.close();
      await server.stop();
    }
  };
  const collection = (client: MongoClient) => client.db('keys').collection<Doc>('docs');

  /** Every written id is found by `_id` and by its unique (w, n) pair; duplicates of both are refused. */
  const readsBack = async (docs: ReturnType<typeof collection>, written: Doc[]) => {
    const missing: unknown[] = [];
    for (const d of written) if (!(await docs.findOne({ _id: d._id as never }))) missing.push(d._id);
    expect(missing).toEqual([]);
    const byPair: unknown[] = [];
    for (const d of written.filter((_, i) => i % 10 === 0))
      if (!(await docs.findOne({ w: d.w, n: d.n }))) byPair.push([d.w, d.n]);
    expect(byPair).toEqual([]);
    for (const d of written.filter((_, i) => i % 50 === 0)) {
      await expect(docs.insertOne({ _id: d._id as never, w: -1, n: -1 })).rejects.toMatchObject({ code: 11000 });
      await expect(docs.insertOne({ _id: new ObjectId() as never, w: d.w, n: d.n })).rejects.toMatchObject({
        code: 11000,
      });
    }
    expect(await docs.countDocuments({})).toBe(written.length);
  };

  it('finds every key and refuses every duplicate, whichever key type wrote the file', async () => {
    // The file written before, in the server's data directory.
    await server.stop();
    writeFileSync(path.join(server.dataDir, 'data.mv'), before.file());
    const written: Doc[] = before.docs();
    expect(written).toHaveLength(600);
    await withServer(async (docs) => {
      await readsBack(docs, written);
      const batch = ids(2).map((_id, n) => ({ _id, w: 2, n }));
      await docs.insertMany(batch as never[], { ordered: false });
      written.push(...batch);
      await readsBack(docs, written);
    });
    await withServer((docs) => readsBack(docs, written));
  }, 240_000);

  /**
   * A collection's documents are keyed by `_id` as it is, so one map holds ObjectIds, strings and
   * numbers. H2's own key type shared the last type it met between threads: an insert on one
   * connection racing another connection's insert and commit threw "Can not compare" (and inside the
   * store's writer closed the store). Twelve connections write batches of mixed ids into one
   * collection with a unique index: every write is acknowledged, every document is there and found.
   */
  it('takes concurrent writes of mixed `_id` types on many connections (decision 1100)', async () => {
    await server.start();
    const client = await new MongoClient(server.url, { maxPoolSize: 16, serverSelectionTimeoutMS: 60_000 }).connect();
    try {
      const docs = client.db('mixed').collection<Doc>('docs');
      await docs.createIndex({ w: 1, n: 1 }, { unique: true });
      const mixed = (n: number): unknown =>
        n % 3 === 0 ? new ObjectId() : n % 3 === 1 ? `k-${n}-${'x'.repeat(n % 13)}` : n * 7 + 0.5 * (n % 2);
      const writers = 12;
      const rounds = 40;
      const written: Doc[] = [];
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          for (let r = 0; r < rounds; r++) {
            const batch = Array.from({ length: 50 }, (_, i) => {
              const n = (w * rounds + r) * 50 + i;
              return { _id: mixed(n), w, n };
            });
            await docs.insertMany(batch as never[], { ordered: false });
            written.push(...batch);
            expect(await docs.findOne({ _id: batch[7]._id as never })).toMatchObject({ w, n: batch[7].n });
          }
        }),
      );
      expect(await docs.countDocuments({})).toBe(writers * rounds * 50);
      const missing: unknown[] = [];
      for (const d of written.filter((_, i) => i % 40 === 0))
        if (!(await docs.findOne({ _id: d._id as never }))) missing.push(d._id);
      expect(missing).toEqual([]);
    } finally {
      await client.close();
      await server.stop();
    }
  }, 240_000);
});
