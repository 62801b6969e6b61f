import { afterAll, describe, expect, it } from '@jest/globals';
import {
  Binary,
  BSON,
  BSONRegExp,
  Code,
  Decimal128,
  Double,
  Int32,
  Long,
  MaxKey,
  MinKey,
  MongoClient,
  ObjectId,
  Timestamp,
  UUID,
  type Document,
} from 'mongodb';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { dedicated, type DedicatedService } from '../../support/dedicated-services.js';

/**
 * The embedded default stores a collection's documents as BSON and ObjectId keys as their 12 bytes
 * (decision 1178), where H2 stored both as Java serialisations. A file holds values of both kinds once
 * a server of this launcher opens one written before: every value must read back exactly as written
 * (each BSON type the driver sends, with its numeric width), whichever form it was stored in, after a
 * restart (pages read from the file, not the cache), and the `_id` and unique indexes must find every
 * document and refuse every duplicate across the two forms.
 */
describe('embedded default: documents stored as BSON read back exactly, beside values stored before', () => {
  /** The launcher's settings at a server's next start (`-Dmongo.h2.values=java`: values written as H2 writes them). */
  let options: string[] = [];
  const servers: DedicatedService[] = [];
  /** A private server with a data directory of its own (each test its own file). */
  const newServer = async () => {
    // @ts-expect-error plain ESM script without types
    const { mongoJavaServerCommand } = await import('../../../scripts/services.mjs');
    const server = await dedicated(
      'mongo-java-server',
      'mongodb',
      (port, dir) => mongoJavaServerCommand('h2', port, path.join(dir, 'data.mv'), options) as [string, string[]],
    );
    servers.push(server);
    // dedicated() starts it; each use below starts it again with the options of that moment.
    await server.stop();
    return server;
  };
  afterAll(async () => {
    for (const s of servers) await s.destroy();
  });

  const withServer = async (server: DedicatedService, use: (client: MongoClient) => Promise<void>) => {
    await server.start();
    const client = await new MongoClient(`${server.url}/`, { serverSelectionTimeoutMS: 60_000 }).connect();
    try {
      await use(client);
    } finally {
      await client.close();
      await server.stop();
    }
  };
  const docs = (client: MongoClient) => client.db('values').collection<Document>('docs');

  /** A document holding every BSON type the driver sends, distinct per `n`. */
  const rich = (_id: unknown, n: number, form: string): Document => ({
    _id,
    n: new Int32(n),
    form,
    ref: new ObjectId(),
    text: `row ${n} ${'é'.repeat(n % 5)}`,
    int32: new Int32(-n),
    int64: Long.fromString(`${9_007_199_254_740_993n + BigInt(n)}`),
    double: new Double(n + 0.25),
    wholeDouble: new Double(n),
    decimal: Decimal128.fromString(`${n}.0100`),
    yes: n % 2 === 0,
    nothing: null,
    at: new Date(1_700_000_000_000 + n),
    binary: new Binary(Buffer.from([0, n % 256, 255, 7]), 0),
    uuid: new UUID(),
    legacyUuid: new Binary(Buffer.alloc(16, n % 256), 3),
    pattern: new BSONRegExp(`^row ${n}`, 'i'),
    stamp: new Timestamp({ t: 1_700_000 + n, i: n + 1 }),
    min: new MinKey(),
    max: new MaxKey(),
    code: new Code('function () { return 1; }'),
    nested: { a: { b: [new Int32(1), 'two', { c: new Double(3.5) }, [Long.fromNumber(4)]] }, empty: {} },
    list: [],
  });
  /** Canonical Extended JSON: equal strings mean equal types and values, fields in order. */
  const canonical = (d: Document) => BSON.EJSON.stringify(d, { relaxed: false });
  const ids = (form: string, count: number): unknown[] =>
    Array.from({ length: count }, (_, i) =>
      i % 3 === 0 ? new ObjectId() : i % 3 === 1 ? `${form}-${i}` : (form === 'java' ? 0 : 10_000) + i + 0.5,
    );

  /** Every document reads back exactly, by `_id` and in a scan; its unique `ref` finds it; duplicates are refused. */
  const readsBack = async (client: MongoClient, written: Map<string, Document>) => {
    const c = docs(client);
    const raw = { promoteValues: false, promoteLongs: false, promoteBuffers: false } as const;
    const scanned = await c.find({}, raw).toArray();
    expect(scanned).toHaveLength(written.size);
    const wrong = scanned.filter((d) => canonical(d) !== canonical(written.get(canonical({ _id: d._id }))!));
    expect(wrong.map(canonical)).toEqual([]);
    const sample = [...written.values()].filter((_, i) => i % 7 === 0);
    for (const d of sample) {
      expect(canonical((await c.findOne({ _id: d._id }, raw))!)).toBe(canonical(d));
      expect((await c.findOne({ ref: d.ref }))?._id).toEqual(d._id);
      await expect(c.insertOne({ _id: d._id, n: -1 })).rejects.toMatchObject({ code: 11000 });
      await expect(c.insertOne({ ref: d.ref, n: -1 })).rejects.toMatchObject({ code: 11000 });
    }
  };
  const keep = (written: Map<string, Document>, batch: Document[]) => {
    for (const d of batch) written.set(canonical({ _id: d._id }), d);
  };

  it('reads values H2 serialised and values stored as BSON alike, across restarts and updates', async () => {
    const server = await newServer();
    const written = new Map<string, Document>();
    // Written as the earlier launcher wrote them.
    options = ['-Dmongo.h2.values=java'];
    await withServer(server, async (client) => {
      await docs(client).createIndex({ ref: 1 }, { unique: true });
      const batch = ids('java', 90).map((_id, i) => rich(_id, i, 'java'));
      await docs(client).insertMany(batch);
      keep(written, batch);
    });
    // The same file opened by this launcher: the old values read, new ones and rewritten ones stored as BSON.
    options = [];
    await withServer(server, async (client) => {
      await readsBack(client, written);
      const batch = ids('bson', 90).map((_id, i) => rich(_id, 1000 + i, 'bson'));
      await docs(client).insertMany(batch);
      keep(written, batch);
      // Documents written before, changed now (their pages are written again, in the new form).
      for (const d of [...written.values()].filter((_, i) => i % 4 === 0)) {
        const text = `${d.text} changed`;
        await docs(client).updateOne({ _id: d._id }, { $set: { text } });
        d.text = text;
      }
    });
    // Pages from the file again.
    await withServer(server, (client) => readsBack(client, written));
  }, 240_000);

  it('stores documents without Java serialisation (the class names H2 wrote into every value are absent)', async () => {
    const className = (file: Buffer) => file.toString('latin1').split('de.bwaldvogel.mongo.bson.Document').length - 1;
    const server = await newServer();
    await withServer(server, async (client) => {
      const c = client.db('form').collection<Document>('docs');
      await c.insertMany(Array.from({ length: 200 }, (_, i) => rich(new ObjectId(), i, 'bson')));
    });
    const bson = className(readFileSync(path.join(server.dataDir, 'data.mv')));
    options = ['-Dmongo.h2.values=java'];
    try {
      await withServer(server, async (client) => {
        const c = client.db('form').collection<Document>('java');
        await c.insertMany(Array.from({ length: 200 }, (_, i) => rich(new ObjectId(), i, 'java')));
      });
    } finally {
      options = [];
    }
    const both = className(readFileSync(path.join(server.dataDir, 'data.mv')));
    // The control: written as H2 writes them, the class name is in the file (once per page at least).
    expect(both).toBeGreaterThan(bson);
    expect(bson).toBe(0);
  }, 240_000);
});
