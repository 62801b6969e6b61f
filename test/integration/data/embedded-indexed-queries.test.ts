import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, ObjectId, type Collection, type Document, type Filter } from 'mongodb';
import { dedicatedMongoJavaServer, type DedicatedService } from '../../support/dedicated-services.js';

/**
 * Decision 1161: the launcher answers a query that names every key of a unique index (the `_id` index
 * included) and also filters other fields from that index, matching the whole query against the
 * index's documents (mongo-java-server scanned the collection for these: a guarded update `{_id,
 * status}`, a fenced write `{_id, $or: [...]}`, a membership check). The same documents must come back
 * as from a scan: each query is compared with the same query wrapped in `$nor` twice, which no index answers
 * (the server's own matcher over every document is the reference). The launcher's `indexUse` command
 * says how each query was answered, so the test sees the index used without timing anything.
 */
type Doc = Document;

const STATUSES = ['scheduled', 'started', 'ended', undefined] as const;

/** Documents of the shapes the service writes, and some it does not: mixed id types, arrays, missing and null fields, numbers of several types. */
function documents(): Doc[] {
  const out: Doc[] = [];
  for (let i = 0; i < 400; i++) {
    const _id =
      i % 4 === 0 ? new ObjectId() : i % 4 === 1 ? `conf-${i}:${i * 7919}` : i % 4 === 2 ? i * 3 : i * 3 + 0.5;
    const status = STATUSES[i % STATUSES.length];
    out.push({
      _id,
      ...(i % 10 === 9 ? {} : { code: `c${i}` }),
      w: i % 7,
      n: Math.floor(i / 7),
      ...(status ? { status } : {}),
      epoch: i % 5 === 0 ? null : i % 6,
      members: i % 3 === 0 ? [`u${i % 11}`, `u${(i + 1) % 11}`] : `u${i % 11}`,
      nested: { level: i % 4, tags: i % 2 ? ['a', 'b'] : ['c'] },
      // Announcements waiting in the document (decision 890's outbox), or an outbox emptied by the relay.
      ...(i % 8 === 0
        ? {
            outbox: [
              { id: `e${i}`, at: new Date(Date.UTC(2026, 0, 1 + (i % 28))) },
              { id: `f${i}`, at: new Date(Date.UTC(2026, 1, 1 + (i % 28))) },
            ],
          }
        : i % 8 === 4
          ? { outbox: [] }
          : {}),
    });
  }
  return out;
}

/** Queries with every key of a unique index and more: the shapes the repositories use, and edge cases. */
function queries(docs: Doc[]): Filter<Doc>[] {
  const out: Filter<Doc>[] = [];
  for (const d of docs.filter((_, i) => i % 9 === 0)) {
    out.push({ _id: d._id, status: 'scheduled' });
    out.push({ _id: d._id, status: { $in: ['started', 'ended'] } });
    out.push({ _id: d._id, $or: [{ epoch: { $lte: 3 } }, { epoch: { $exists: false } }] });
    out.push({ _id: d._id, $or: [{ members: 'u1' }, { members: 'u2' }, { status: 'ended' }] });
    out.push({ _id: d._id, 'nested.tags': 'a' });
    out.push({ _id: d._id, epoch: null });
    out.push({ _id: { $in: [d._id, docs[(docs.indexOf(d) + 1) % docs.length]!._id, 'absent'] }, status: 'started' });
    out.push({ code: `c${String(docs.indexOf(d))}`, w: { $gte: 3 } });
    out.push({ code: null, status: 'ended' });
    out.push({ w: d.w, n: d.n, status: d.status ?? 'scheduled' });
    out.push({ w: d.w, n: d.n, members: { $ne: 'u3' } });
  }
  const id = (v: unknown) => v as ObjectId; // ids of every type, as the documents hold them
  out.push({ _id: id('absent'), status: 'scheduled' });
  out.push({ _id: id(3), status: 'ended' });
  out.push({ _id: id(3.0), epoch: { $gt: 0 } });
  return out;
}

async function indexUse(client: MongoClient): Promise<{
  exact: number;
  residual: number;
  secondary: number;
  union: number;
  conjunction: number;
  counted: number;
  scanned: number;
  secondaryEntries: number;
  scans: Record<string, number>;
}> {
  const r = await client.db('admin').command({ indexUse: 1 });
  return {
    exact: Number(r.exact),
    residual: Number(r.residual),
    secondary: Number(r.secondary),
    union: Number(r.union),
    conjunction: Number(r.conjunction),
    counted: Number(r.counted),
    secondaryEntries: Number(r.secondaryEntries),
    scanned: Number(r.scanned),
    scans: r.scans as Record<string, number>,
  };
}

/**
 * The same query as a scan: `$nor` of its `$nor`, which matches what the query matches and which no
 * index answers (the server's own matcher over every document is the reference).
 */
const scanOf = (q: object) => ({ $nor: [{ $nor: [q] }] }) as Filter<Doc>;

const sortKey = (d: Doc) => JSON.stringify(d._id);
const sorted = (docs: Doc[]) => [...docs].sort((a, b) => sortKey(a).localeCompare(sortKey(b)));

describe.each(['h2', 'memory'] as const)('embedded server (%s): a unique index with a residual filter', (backend) => {
  let server: DedicatedService;
  let client: MongoClient;
  let docs: Collection<Doc>;
  let written: Doc[];

  beforeAll(async () => {
    server = await dedicatedMongoJavaServer(backend);
    client = await new MongoClient(server.url, { serverSelectionTimeoutMS: 60_000 }).connect();
    docs = client.db('planner').collection<Doc>('docs');
    await docs.createIndex({ code: 1 }, { unique: true, sparse: true });
    await docs.createIndex({ w: 1, n: 1 }, { unique: true });
    written = documents();
    await docs.insertMany(written);
  }, 180_000);
  afterAll(async () => {
    await client?.close();
    await server?.destroy();
  });

  it('finds and counts the same documents as a scan, the finds from the index', async () => {
    const all = queries(written);
    const before = await indexUse(client);
    const mismatches: unknown[] = [];
    const expected: number[] = [];
    for (const q of all) {
      const fromIndex = (await docs.find(q).toArray()) as Doc[];
      const fromScan = (await docs.find(scanOf(q)).toArray()) as Doc[];
      if (JSON.stringify(sorted(fromIndex)) !== JSON.stringify(sorted(fromScan))) mismatches.push(q);
      expected.push(fromScan.length);
    }
    const after = await indexUse(client);
    for (const [i, q] of all.entries())
      if ((await docs.countDocuments(q)) !== expected[i]) mismatches.push({ count: q });
    expect(mismatches).toEqual([]);
    // The queries do match documents (a test of empty results would prove nothing).
    expect(expected.reduce((a, b) => a + b, 0)).toBeGreaterThan(all.length / 4);
    // Every query above names a unique index's keys and more and is answered from it, but for `code: null`
    // on the sparse index (which holds no document without a code: a scan, as mongo-java-server does); each
    // scan form scanned.
    const sparseNulls = all.filter((q) => 'code' in q && q.code === null).length;
    expect(sparseNulls).toBeGreaterThan(0);
    expect(after.residual - before.residual).toBe(all.length - sparseNulls);
    expect(after.scanned - before.scanned).toBe(all.length + sparseNulls);
    // The scans are told by collection and query shape (the keys, not the values).
    expect((after.scans['docs [$nor]'] ?? 0) - (before.scans['docs [$nor]'] ?? 0)).toBe(all.length);
    expect((after.scans['docs [code, status]'] ?? 0) - (before.scans['docs [code, status]'] ?? 0)).toBe(sparseNulls);
  });

  it('a guarded update and a fenced upsert change what a scan would, and nothing else', async () => {
    const target = written.find((d) => d.status === 'scheduled' && d._id instanceof ObjectId)!;
    const before = await indexUse(client);
    // Guarded update: wins once, then its guard no longer matches.
    const first = await docs.updateOne({ _id: target._id, status: 'scheduled' }, { $set: { status: 'started' } });
    const again = await docs.updateOne({ _id: target._id, status: 'scheduled' }, { $set: { status: 'started' } });
    expect([first.modifiedCount, again.matchedCount]).toEqual([1, 0]);
    // Fenced write (the call records' epoch filter): an older epoch matches nothing and its upsert meets the `_id`.
    const fence = (epoch: number) => ({
      _id: target._id,
      $or: [{ epoch: { $lte: epoch } }, { epoch: { $exists: false } }],
    });
    await docs.updateOne({ _id: target._id }, { $set: { epoch: 7 } });
    await expect(docs.updateOne(fence(6), { $set: { w: 99, n: 1 } }, { upsert: true })).rejects.toMatchObject({
      code: 11000,
    });
    const newer = await docs.updateOne(fence(8), { $set: { epoch: 8 } }, { upsert: true });
    expect([newer.matchedCount, newer.upsertedCount]).toEqual([1, 0]);
    // A delete with a residual filter removes exactly the matching document.
    const gone = written.find((d) => d.status === 'ended' && typeof d._id === 'number')!;
    expect((await docs.deleteOne({ _id: gone._id, status: 'started' })).deletedCount).toBe(0);
    expect((await docs.deleteOne({ _id: gone._id, status: 'ended' })).deletedCount).toBe(1);
    const after = await indexUse(client);
    expect(await docs.findOne({ _id: gone._id })).toBeNull();
    expect(after.scanned - before.scanned).toBe(0);
    expect(await docs.findOne({ _id: target._id })).toMatchObject({ status: 'started', epoch: 8 });
  });
});

/**
 * Decision 1162: the launcher's non-unique indexes. mongo-java-server kept none (every query by a
 * non-unique field scanned); the launcher's hold each value of an index's first key in memory, built on
 * first use and kept current by every write after. The same documents, in the same order, must come back
 * as from a scan, after inserts, updates of the indexed fields (arrays included), deletes, and (H2) a
 * restart that drops what memory held.
 */
describe.each(['h2', 'memory'] as const)('embedded server (%s): non-unique indexes', (backend) => {
  let server: DedicatedService;
  let client: MongoClient;
  let docs: Collection<Doc>;

  const connect = async () => {
    client = await new MongoClient(server.url, { serverSelectionTimeoutMS: 60_000 }).connect();
    docs = client.db('planner').collection<Doc>('multi');
  };
  beforeAll(async () => {
    server = await dedicatedMongoJavaServer(backend);
    await connect();
    await docs.createIndex({ status: 1, w: 1 });
    await docs.createIndex({ members: 1, n: -1 });
    await docs.createIndex({ 'nested.tags': 1 });
    await docs.createIndex({ epoch: 1 });
    await docs.createIndex({ kind: 1 });
    await docs.createIndex({ 'outbox.at': 1 });
    await docs.insertMany(documents());
    // Documents none of the queries below name, but one: an index's documents are fetched one by one, so
    // past a quarter of the collection the server scans instead; these keep every other query under it.
    await docs.insertMany(
      Array.from({ length: 1200 }, (_, i): Doc => ({ _id: `filler-${i}`, kind: 'filler', w: i % 7 })),
    );
  }, 180_000);
  afterAll(async () => {
    await client?.close();
    await server?.destroy();
  });

  /** Queries on the indexes' first keys (values, `$in`, arrays' elements, numbers of other types) and some they cannot answer. */
  const shapes = (): { q: Filter<Doc>; indexed: boolean }[] => [
    ...STATUSES.filter(Boolean).map((status) => ({ q: { status }, indexed: true })),
    { q: { status: 'started', w: { $gte: 2 } }, indexed: true },
    { q: { status: { $in: ['started', 'ended', 'absent'] }, n: { $lt: 30 } }, indexed: true },
    ...Array.from({ length: 11 }, (_, i) => ({ q: { members: `u${i}` }, indexed: true })),
    { q: { members: { $in: ['u1', 'u2'] }, status: 'scheduled' }, indexed: true },
    { q: { 'nested.tags': 'a', w: 3 }, indexed: true },
    { q: { 'nested.tags': { $in: ['b', 'c'] } }, indexed: true },
    { q: { epoch: 2 }, indexed: true },
    { q: { epoch: 2.0, status: { $ne: 'ended' } }, indexed: true },
    { q: { epoch: { $in: [1, 3.0, 5] } }, indexed: true },
    { q: { $or: [{ status: 'ended' }, { members: 'u3' }] }, indexed: true },
    { q: { n: { $lt: 40 }, $or: [{ members: { $in: ['u4', 'u6'] } }, { 'nested.tags': 'c' }] }, indexed: true },
    { q: { $or: [{ status: 'started', w: 2 }, { _id: 3 as unknown as ObjectId }, { epoch: 4 }] }, indexed: true },
    // Ranges: every document the index holds is a candidate (a range matches only documents with a value).
    { q: { epoch: { $gte: 2 } }, indexed: true },
    { q: { epoch: { $gt: 0, $lte: 4 }, status: { $ne: 'ended' } }, indexed: true },
    { q: { epoch: { $lt: 3 } }, indexed: true },
    { q: { 'outbox.at': { $gte: new Date(-8.64e15) } }, indexed: true },
    { q: { 'outbox.at': { $lt: new Date(Date.UTC(2026, 0, 10)) }, w: { $ne: 2 } }, indexed: true },
    { q: { epoch: { $gte: null } }, indexed: false },
    { q: { epoch: { $gte: 2, $exists: true } }, indexed: false },
    { q: { $or: [{ status: 'started' }, { w: 3 }] }, indexed: false },
    { q: { kind: 'absent' }, indexed: true },
    { q: { kind: 'filler', w: 3 }, indexed: false },
    { q: { epoch: null }, indexed: false },
    { q: { status: { $exists: false } }, indexed: false },
    { q: { members: ['u1', 'u2'] }, indexed: false },
    { q: { status: /^sch/ }, indexed: false },
    // Conjunctions (decision 1175): the narrowest branch an index answers gives the candidates.
    { q: { $and: [{ status: 'started' }, { w: { $gte: 2 } }] }, indexed: true },
    {
      q: { $and: [{ $or: [{ status: 'ended' }, { members: 'u3' }] }, { $or: [{ n: { $lt: 20 } }, { w: 3 }] }] },
      indexed: true,
    },
    { q: { $and: [{ epoch: 2 }, { $or: [{ status: 'started' }, { w: 3 }] }], n: { $gt: 3 } }, indexed: true },
    { q: { $and: [{ w: 3 }, { n: { $gt: 5 } }] }, indexed: false },
  ];

  /** Every shape against its scan form (`scanOf`), in the order returned; and how the server answered them. */
  const compare = async () => {
    const before = await indexUse(client);
    const mismatches: unknown[] = [];
    let matched = 0;
    const expected: number[] = [];
    for (const { q } of shapes()) {
      const fromIndex = await docs.find(q).toArray();
      const fromScan = await docs.find(scanOf(q)).toArray();
      if (JSON.stringify(fromIndex) !== JSON.stringify(fromScan)) mismatches.push(q);
      matched += fromScan.length;
      expected.push(fromScan.length);
    }
    const after = await indexUse(client);
    expect(mismatches).toEqual([]);
    expect(matched).toBeGreaterThan(200);
    const indexed = shapes().filter((s) => s.indexed).length;
    expect(
      after.secondary + after.union + after.conjunction - before.secondary - before.union - before.conjunction,
    ).toBe(indexed);
    expect(after.scanned - before.scanned).toBe(shapes().length * 2 - indexed);
    // countDocuments (an aggregation) counts through the same planning, with its skip and limit.
    const counts: unknown[] = [];
    for (const [i, { q }] of shapes().entries()) {
      const n = expected[i]!;
      const got = [
        await docs.countDocuments(q),
        await docs.countDocuments(q, { skip: 2, limit: 5 }),
        await docs.countDocuments(q, { skip: 3 }),
      ];
      const want = [n, Math.min(Math.max(n - 2, 0), 5), Math.max(n - 3, 0)];
      if (JSON.stringify(got) !== JSON.stringify(want)) counts.push({ q, got, want });
    }
    expect(counts).toEqual([]);
    const counted = await indexUse(client);
    expect(counted.counted - after.counted).toBe(shapes().length * 3);
    expect(counted.scanned - after.scanned).toBe((shapes().length - indexed) * 3);
  };

  it('finds the documents a scan finds, in its order', compare);

  it('keeps finding them after inserts, updates of the indexed fields and deletes', async () => {
    await docs.insertMany(
      Array.from({ length: 50 }, (_, i): Doc => ({
        _id: `late-${i}`,
        status: i % 2 ? 'started' : 'scheduled',
        members: [`u${i % 11}`, 'u1'],
        epoch: i % 4,
        nested: { tags: ['a'] },
      })),
    );
    await docs.updateMany({ status: 'scheduled', w: { $lt: 3 } }, { $set: { status: 'ended' } });
    // Arrays grow and shrink (only the documents whose members are an array), a value becomes an array.
    const arrays = async (member: string) =>
      (await docs.find({ members: member }).toArray()).filter((d) => Array.isArray(d.members)).map((d) => d._id);
    await docs.updateMany({ _id: { $in: await arrays('u3') } }, { $push: { members: 'u7' } } as never);
    await docs.updateMany({ _id: { $in: await arrays('u5') } }, { $pull: { members: 'u5' } } as never);
    await docs.updateMany({ members: 'u4' }, { $set: { members: ['u4', 'u8'] } });
    await docs.updateMany({ epoch: 1 }, { $unset: { epoch: '' } });
    // The relay's clearing and a writer's announcement: entries pulled (some outboxes emptied), pushed.
    await docs.updateMany({ 'outbox.at': { $gte: new Date(0) }, w: { $lt: 3 } }, {
      $pull: { outbox: { at: { $lt: new Date(Date.UTC(2026, 1, 1)) } } },
    } as never);
    await docs.updateMany({ 'outbox.at': { $gte: new Date(0) }, w: 5 }, { $set: { outbox: [] } });
    await docs.updateMany({ status: 'started', w: 1 }, {
      $push: { outbox: { id: 'late', at: new Date(Date.UTC(2026, 2, 1)) } },
    } as never);
    await docs.updateMany({ 'nested.tags': 'c', n: { $gt: 20 } }, { $set: { 'nested.tags': ['b'] } });
    expect((await docs.deleteMany({ status: 'started', w: 4 })).deletedCount).toBeGreaterThan(0);
    expect((await docs.deleteMany({ members: 'u9', n: { $lt: 10 } })).deletedCount).toBeGreaterThan(0);
    await compare();
  });

  it('holds an entry per indexed value of the documents there are: none once they are deleted', async () => {
    const { secondaryEntries } = await indexUse(client);
    expect(secondaryEntries).toBeGreaterThan(await docs.countDocuments());
    const removed = await docs.find({ members: 'u2' }).toArray();
    await docs.deleteMany({ _id: { $in: removed.map((d) => d._id) } });
    await compare();
    await docs.insertMany(removed);
    await compare();
    const restored = await indexUse(client);
    expect(restored.secondaryEntries).toBe(secondaryEntries);
  });

  it('builds them again after a restart (H2), from what the server holds; none held once all are deleted', async () => {
    if (backend === 'h2') {
      await client.close();
      await server.stop();
      await server.start();
      await connect();
      await compare();
    }
    await docs.deleteMany({});
    expect((await indexUse(client)).secondaryEntries).toBe(0);
  });
});

describe('embedded server: secondary indexes past their memory budget', () => {
  let server: DedicatedService;
  let client: MongoClient;

  beforeAll(async () => {
    server = await dedicatedMongoJavaServer('memory', ['-Dmongo.secondaryIndexMaxEntries=200']);
    client = await new MongoClient(server.url, { serverSelectionTimeoutMS: 60_000 }).connect();
  }, 180_000);
  afterAll(async () => {
    await client?.close();
    await server?.destroy();
  });

  it('an index past the budget gives its entries back and its queries scan, with the same answers', async () => {
    const docs = client.db('planner').collection<Doc>('budget');
    await docs.createIndex({ status: 1 });
    await docs.createIndex({ members: 1 });
    await docs.insertMany(documents());
    const before = await indexUse(client);
    // 300 of the 400 documents have a status: the budget of 200 is passed while the status index is built.
    const byStatus = await docs.find({ status: 'started' }).toArray();
    expect(byStatus).toEqual(await docs.find(scanOf({ status: 'started' })).toArray());
    const after = await indexUse(client);
    expect([after.secondary - before.secondary, after.secondaryEntries]).toEqual([0, 0]);
    expect(after.scans['budget [status]'] ?? 0).toBe(1);
    // Refused for good: the next query scans without building again.
    await docs.find({ status: 'ended' }).toArray();
    expect((await indexUse(client)).scans['budget [status]']).toBe(2);
  });
});
