import { beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, MongoServerError, ObjectId, type Collection, type Document, type Filter } from 'mongodb';
import { privateEmbeddedServer } from '../../support/embedded-server.js';

/**
 * Decision 1174: a compound unique index of the embedded server answers queries by its first key (a
 * user's favourites by `userId` of `{userId, contactId}`, an event's participant log by `eventId`), as
 * MongoDB answers an index's prefix. Each answer must be the scan's (the same query under `$nor` twice, which
 * no index answers), before and after writes that change the first key, after a restart (H2), and the
 * unique index must still refuse duplicates. The launcher's `indexUse` counts the queries answered from
 * a secondary index (`secondary`) and the entries held (`secondaryEntries`).
 */
interface Doc extends Document {
  _id?: unknown;
}

const where = (filter: object) => filter as Filter<Doc>;
const users = Array.from({ length: 12 }, () => new ObjectId());

/** Favourites (ObjectId pairs), with numbers of two types and strings as first keys for some. */
function favourites(): Doc[] {
  const out: Doc[] = [];
  for (let i = 0; i < 600; i++)
    out.push({
      userId: i % 10 === 9 ? (i % 20 === 9 ? 7 : 'legacy') : users[i % users.length],
      contactId: new ObjectId(),
      n: i,
    });
  out.push({ userId: 7.0 + 0.5, contactId: new ObjectId(), n: 1000 });
  return out;
}

async function indexUse(client: MongoClient) {
  const r = await client.db('admin').command({ indexUse: 1 });
  return { secondary: Number(r.secondary), entries: Number(r.secondaryEntries), scanned: Number(r.scanned) };
}

const key = (d: Doc) => JSON.stringify(d);
const same = (a: Doc[], b: Doc[]) => JSON.stringify(a.map(key).sort()) === JSON.stringify(b.map(key).sort());

describe.each(['h2', 'memory'] as const)(
  'embedded server (%s): a compound unique index by its first key',
  (backend) => {
    const embedded = privateEmbeddedServer(backend);
    let client: MongoClient;
    let favs: Collection<Doc>;
    const connect = () => {
      client = embedded.client;
      favs = client.db('people').collection<Doc>('favourites');
    };

    beforeAll(async () => {
      connect();
      await favs.createIndex({ userId: 1, contactId: 1 }, { unique: true });
      await favs.insertMany(favourites() as never[]);
      // Documents no query below names: the index's answer stays under a quarter of the collection.
      await favs.insertMany(Array.from({ length: 2000 }, (_, i) => ({ userId: new ObjectId(), contactId: i, n: -i })));
    });

    const shapes = async (): Promise<object[]> => {
      const some = (
        await favs
          .find(where({ userId: users[3] }))
          .limit(5)
          .toArray()
      ).map((d) => d.contactId);
      return [
        ...users.slice(0, 6).map((u) => ({ userId: u })),
        { userId: users[3], contactId: { $in: [...some, new ObjectId()] } },
        { userId: { $in: [users[1], users[2], 'legacy'] } },
        { userId: 7 },
        { userId: 7.0, n: { $gt: 100 } },
        { userId: 'legacy', n: { $lt: 300 } },
        { userId: new ObjectId() },
        { userId: users[5], n: { $gte: 50 }, contactId: { $exists: true } },
      ];
    };

    const compare = async () => {
      const before = await indexUse(client);
      const all = await shapes();
      const mismatches: unknown[] = [];
      let found = 0;
      for (const q of all) {
        const got = await favs.find(where(q)).toArray();
        const scanned = await favs.find(where({ $nor: [{ $nor: [q] }] })).toArray();
        if (!same(got, scanned)) mismatches.push({ q, got: got.length, scanned: scanned.length });
        found += got.length;
      }
      expect(mismatches).toEqual([]);
      expect(found).toBeGreaterThan(all.length * 10);
      const after = await indexUse(client);
      // Every query above by the first key; the scan forms (and the shapes' own look-up) aside.
      expect(after.secondary - before.secondary).toBe(all.length + 1);
      expect(after.scanned - before.scanned).toBe(all.length);
    };

    it('finds what a scan finds, from the index', compare);

    it('keeps finding it after inserts, changes of the first key and deletes; still refuses a duplicate pair', async () => {
      const moved = await favs
        .find(where({ userId: users[0] }))
        .limit(10)
        .toArray();
      await favs.updateMany(where({ _id: { $in: moved.map((d) => d._id) } }), { $set: { userId: users[1] } });
      await favs.deleteMany(where({ userId: users[2], n: { $lt: 200 } }));
      await favs.insertMany(
        Array.from({ length: 15 }, (_, i) => ({ userId: users[4], contactId: new ObjectId(), n: 5000 + i })),
      );
      await compare();
      const pair = (await favs.findOne(where({ userId: users[4] })))!;
      const refused = await favs
        .insertOne({ userId: pair.userId, contactId: pair.contactId, n: -1 })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(MongoServerError);
      expect((refused as MongoServerError).code).toBe(11000);
      expect(await favs.countDocuments(where({ userId: pair.userId, contactId: pair.contactId }))).toBe(1);
      await compare();
    });

    it('builds it again after a restart (H2); holds nothing once the documents or the index are gone', async () => {
      if (backend === 'h2') {
        await embedded.restart();
        connect();
        await compare();
      }
      await favs.dropIndex('userId_1_contactId_1');
      const all = await favs.find(where({ userId: users[1] })).toArray();
      expect(same(all, await favs.find(where({ $nor: [{ $nor: [{ userId: users[1] }] }] })).toArray())).toBe(true);
      expect((await indexUse(client)).entries).toBe(0);
      await favs.createIndex({ userId: 1, contactId: 1 }, { unique: true });
      await compare();
      expect((await indexUse(client)).entries).toBeGreaterThan(0);
      await favs.drop();
      expect((await indexUse(client)).entries).toBe(0);
    });
  },
);
