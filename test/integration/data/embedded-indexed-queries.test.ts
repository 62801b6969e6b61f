import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, ObjectId, type Collection, type Document, type Filter } from 'mongodb';
import { dedicatedMongoJavaServer, type DedicatedService } from '../../support/dedicated-services.js';

/**
 * Decision 1161: the launcher answers a query that names every key of a unique index (the `_id` index
 * included) and also filters other fields from that index, matching the whole query against the
 * index's documents (mongo-java-server scanned the collection for these: a guarded update `{_id,
 * status}`, a fenced write `{_id, $or: [...]}`, a membership check). The same documents must come back
 * as from a scan: each query is compared with the same query wrapped in `$and`, which no index answers
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

async function indexUse(
  client: MongoClient,
): Promise<{ exact: number; residual: number; scanned: number; scans: Record<string, number> }> {
  const r = await client.db('admin').command({ indexUse: 1 });
  return {
    exact: Number(r.exact),
    residual: Number(r.residual),
    scanned: Number(r.scanned),
    scans: r.scans as Record<string, number>,
  };
}

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
      const fromScan = (await docs.find({ $and: [q] } as Filter<Doc>).toArray()) as Doc[];
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
    // `$and` form scanned.
    const sparseNulls = all.filter((q) => 'code' in q && q.code === null).length;
    expect(sparseNulls).toBeGreaterThan(0);
    expect(after.residual - before.residual).toBe(all.length - sparseNulls);
    expect(after.scanned - before.scanned).toBe(all.length + sparseNulls);
    // The scans are told by collection and query shape (the keys, not the values).
    expect((after.scans['docs [$and]'] ?? 0) - (before.scans['docs [$and]'] ?? 0)).toBe(all.length);
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
