import { beforeAll, describe, expect, it } from '@jest/globals';
import { Long, MongoClient, ObjectId, type Collection, type Document, type Filter } from 'mongodb';
import { privateEmbeddedServer } from '../../support/embedded-server.js';

/**
 * Decision 1173: on the embedded default (H2) a query sorted by `_id` alone with a limit, with no
 * condition on `_id` or a range of numbers, is answered by walking the collection's keys in order (each
 * numeric type's keys, from the range's bound) instead of reading and sorting every document: the audit
 * trail's batches (`{_id: {$gt: n}}`, sorted, 500 at a time) and its newest page. The answers must be
 * those of the same query without its limit (which the server still answers by reading and sorting
 * everything), sliced: the `_id`s below are numbers of the three types the driver writes (int32, int64,
 * double), interleaved in value, so a walk that kept one type's order, or stopped early, or forgot the
 * skip, answers differently. The launcher's `indexUse` command counts the queries answered in order.
 */
interface Doc extends Document {
  _id: unknown;
}

/** `_id`s 0, 1 (int64), 1.5 (double), 3, 4, 4.5, ...: three types interleaved by value, some negative, some past int32. */
function documents(): Doc[] {
  const out: Doc[] = [];
  for (let i = -40; i < 260; i++) {
    out.push({ _id: i * 3, w: ((i % 7) + 7) % 7, kind: 'int' });
    out.push({ _id: Long.fromNumber(i * 3 + 1), w: ((i % 5) + 5) % 5, kind: 'long' });
    out.push({ _id: i * 3 + 1.5, w: ((i % 3) + 3) % 3, kind: 'double' });
  }
  // Past int32: a double (the driver's number) and an int64 between them.
  out.push({ _id: 3e9, w: 3, kind: 'double' }, { _id: Long.fromNumber(3e9 + 1), w: 3, kind: 'long' });
  out.push({ _id: -3e9, w: 3, kind: 'double' }, { _id: Long.fromNumber(-3e9 - 1), w: 3, kind: 'long' });
  return out;
}

/** Filters with no condition on `_id` or a range of numbers, bounds of each type, and filters on other fields. */
function filters(): Filter<Doc>[] {
  return [
    {},
    { _id: { $gt: 100 } },
    { _id: { $gte: 100 } },
    { _id: { $gte: 100.5 } },
    { _id: { $lt: 500.5 } },
    { _id: { $lte: 499 } },
    { _id: { $gt: 99.5, $lte: 700 } },
    { _id: { $gt: Long.fromNumber(301) } },
    { _id: { $lt: Long.fromNumber(-2) } },
    { _id: { $gte: -1e12 } },
    { _id: { $gt: 2.5e9 } },
    { _id: { $lt: -2.5e9 } },
    { _id: { $gt: 1e12 } },
    { w: 3 },
    { w: 3, _id: { $gt: 200 } },
    { kind: 'long', _id: { $lte: 30 } },
    { w: 99 },
  ] as Filter<Doc>[];
}

async function ordered(client: MongoClient): Promise<number> {
  const r = await client.db('admin').command({ indexUse: 1 });
  return Number(r.ordered ?? 0);
}

/** A filter on `_id`s of any type (the driver's types take one `_id` type per collection). */
const where = (filter: object) => filter as Filter<Doc>;

const ids2 = (docs: Doc[]) => docs.map((d) => String(d._id));

const ids = (docs: Doc[]) => docs.map((d) => Number(d._id));

describe.each(['h2', 'memory'] as const)('embedded server (%s): the first documents in _id order', (backend) => {
  const embedded = privateEmbeddedServer(backend);
  let client: MongoClient;
  let numbers: Collection<Doc>;

  beforeAll(async () => {
    client = embedded.client;
    numbers = client.db('trail').collection<Doc>('numbers');
    await numbers.insertMany(documents());
  });

  it('gives what the same query without its limit gives, sliced, for each direction, limit and skip', async () => {
    const before = await ordered(client);
    const mismatches: unknown[] = [];
    let asked = 0;
    let matched = 0;
    for (const filter of filters()) {
      for (const way of [1, -1] as const) {
        const whole = ids(await numbers.find(filter).sort({ _id: way }).toArray());
        for (const limit of [1, 7, 40, 2000]) {
          for (const skip of [0, 3]) {
            const page = ids(await numbers.find(filter).sort({ _id: way }).skip(skip).limit(limit).toArray());
            asked++;
            matched += page.length;
            const expected = whole.slice(skip, skip + limit);
            if (JSON.stringify(page) !== JSON.stringify(expected))
              mismatches.push({ filter, way, limit, skip, page: page.slice(0, 8), expected: expected.slice(0, 8) });
          }
        }
        // The reference is in order across the three types (the server's own sort).
        for (let i = 1; i < whole.length; i++) expect(way * (whole[i]! - whole[i - 1]!)).toBeGreaterThan(0);
      }
    }
    expect(mismatches).toEqual([]);
    // Most pages are not empty (empty answers would prove nothing).
    expect(matched).toBeGreaterThan(asked * 5);
    // H2 answers every limited query in order; the test server (no key order) as before.
    expect((await ordered(client)) - before).toBe(backend === 'h2' ? asked : 0);
  });

  it('finds a document written after the walk began, and stops at the bound of each type', async () => {
    const scratch = client.db('trail').collection<Doc>(`scratch${backend}`);
    await scratch.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, v: i })));
    const next = async (after: number) =>
      ids(
        await scratch
          .find(where({ _id: { $gt: after } }))
          .sort({ _id: 1 })
          .limit(10)
          .toArray(),
      );
    expect(await next(44)).toEqual([45, 46, 47, 48, 49]);
    await scratch.insertOne({ _id: Long.fromNumber(50), v: 50 });
    await scratch.insertOne({ _id: 50.5, v: 50.5 });
    await scratch.insertOne({ _id: 51, v: 51 });
    expect(await next(44)).toEqual([45, 46, 47, 48, 49, 50, 50.5, 51]);
    await scratch.deleteMany(where({ _id: { $in: [46, 50.5] } }));
    expect(await next(44)).toEqual([45, 47, 48, 49, 50, 51]);
    const newest = await scratch.find({}).sort({ _id: -1 }).limit(1).toArray();
    expect(ids(newest)).toEqual([51]);
  });

  it('finds the documents of a range of strings on _id, with any sort, as a scan does', async () => {
    // Keys as the telemetry records have them (`<conference>:<sequence>`), a conference whose id
    // extends another's, and keys of other types and of characters past ASCII in the same collection.
    const mixed = client.db('trail').collection<Doc>(`strings${backend}`);
    // The telemetry records' index: a range of `_id` with both bounds is read from the key order before
    // this index's first key (decision 1174) is built and held for every record.
    await mixed.createIndex({ conferenceId: 1, sequence: 1 }, { unique: true });
    const conferences = ['conf-A', 'conf-A:b', 'conf-B', 'conf-Ab', 'conf-\u00e9', 'conf-\u{1F600}'];
    await mixed.insertMany([
      ...conferences.flatMap((c, k) =>
        Array.from({ length: 25 }, (_, i) => ({ _id: `${c}:${i}`, conferenceId: c, sequence: i, w: (i + k) % 4 })),
      ),
      ...Array.from({ length: 20 }, (_, i) => ({ _id: i, conferenceId: 'conf-A', sequence: 100 + i, w: 0 })),
      ...Array.from({ length: 10 }, (_, i) => ({
        _id: new ObjectId(),
        conferenceId: 'conf-A',
        sequence: 200 + i,
        w: 1,
      })),
    ]);
    const ranges: [{ _id: object; [key: string]: unknown }, boolean][] = [
      [{ _id: { $gte: 'conf-A:', $lt: 'conf-A;' } }, true],
      [{ _id: { $gte: 'conf-A:', $lt: 'conf-A;' }, conferenceId: 'conf-A' }, true],
      [{ _id: { $gt: 'conf-A:1', $lte: 'conf-A:3' } }, true],
      [{ _id: { $gte: 'conf-B' } }, true],
      [{ _id: { $lt: 'conf-A:2' } }, true],
      [{ _id: { $gte: 'conf-A:', $lt: 'conf-A;' }, w: 2 }, true],
      [{ _id: { $gte: 'zzz' } }, true],
      [{ _id: { $gte: 'conf-\u00e9:', $lt: 'conf-\u00e9;' } }, false],
      [{ _id: { $gte: 'conf-A:', $lt: 5 } }, false],
    ];
    const sorts: (Record<string, 1 | -1> | undefined)[] = [undefined, { sequence: 1 }, { _id: 1 }, { _id: -1 }];
    const before = await ordered(client);
    const mismatches: unknown[] = [];
    let expected = 0;
    let asked = 0;
    let found = 0;
    for (const [range, answered] of ranges)
      for (const sort of sorts)
        for (const limit of [0, 3]) {
          const query = (q: object) => {
            const c = mixed.find(where(q));
            if (sort) c.sort(sort);
            return c.limit(limit).toArray();
          };
          const got = ids2(await query(range));
          const scanned = ids2(await query({ $nor: [{ $nor: [range] }] }));
          if (JSON.stringify(sort ? got : [...got].sort()) !== JSON.stringify(sort ? scanned : [...scanned].sort()))
            mismatches.push({ range, sort, limit, got, scanned });
          found += got.length;
          // Walked down from the range's upper bound; a range with none, sorted down, is not walked.
          const bounds = range._id;
          if (answered && !(sort?._id === -1 && !('$lt' in bounds || '$lte' in bounds))) expected++;
          asked++;
        }
    expect(mismatches).toEqual([]);
    expect(found).toBeGreaterThan(asked * 2);
    expect((await ordered(client)) - before).toBe(backend === 'h2' ? expected : 0);
    // The test server keeps no key order: its first-key index answers (and is held) instead.
    const held = Number((await client.db('admin').command({ indexUse: 1 })).secondaryEntries);
    if (backend === 'h2') expect(held).toBe(0);
    else expect(held).toBeGreaterThan(0);
  });

  it('answers as before where the keys are not all numbers or one is NaN', async () => {
    const mixed = client.db('trail').collection<Doc>(`mixed${backend}`);
    await mixed.insertMany([
      ...Array.from({ length: 30 }, (_, i) => ({ _id: i, n: i })),
      ...Array.from({ length: 5 }, (_, i) => ({ _id: `s${i}`, n: i })),
      ...Array.from({ length: 5 }, () => ({ _id: new ObjectId(), n: 0 })),
    ]);
    const withNaN = client.db('trail').collection<Doc>(`nan${backend}`);
    await withNaN.insertMany([...Array.from({ length: 30 }, (_, i) => ({ _id: i, n: i })), { _id: NaN, n: -1 }]);
    const before = await ordered(client);
    for (const col of [mixed, withNaN]) {
      for (const way of [1, -1] as const) {
        const whole = (await col.find({}).sort({ _id: way }).toArray()).map((d) => d.n as number);
        const page = (await col.find({}).sort({ _id: way }).limit(6).toArray()).map((d) => d.n as number);
        expect(page).toEqual(whole.slice(0, 6));
        const range = where({ _id: { $gte: 10 } });
        const wholeRange = (await col.find(range).sort({ _id: way }).toArray()).map((d) => d.n as number);
        const ranged = (await col.find(range).sort({ _id: way }).limit(3).toArray()).map((d) => d.n as number);
        expect(ranged).toEqual(wholeRange.slice(0, 3));
        expect(ranged).toHaveLength(3);
      }
    }
    expect((await ordered(client)) - before).toBe(0);
  });
});
