import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { WebhookLogRepository } from '../../../src/data/repositories/webhook-log.repository.js';
import type { OutboxEntry } from '../../../src/data/outbox.js';

const entry = (id: string, at = new Date()): OutboxEntry =>
  ({ id, type: 'participant.joined', at, data: { n: id } }) as unknown as OutboxEntry;

/**
 * The tenant's event log on a real MongoDB-wire server: entries are appended in one ordered insert per
 * publisher and call, numbered without gaps, each once, also when publishers (nodes) race over
 * overlapping entries and take each other's numbers.
 */
describe('event log appends', () => {
  let node: TestNode;
  let n = 0;
  /** A provisioned tenant: its log has its unique index on the entry id. */
  const tenant = async () => {
    const name = `evlog${++n}`;
    await node.services.tenants.ensure({ name, displayName: name });
    return name;
  };

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http' });
  });
  afterAll(async () => node?.destroy());

  const logOf = async (t: string) =>
    (await node.infra.mongo.tenantDb(t).models.WebhookEvent.find({}, { eventId: 1 }).sort({ _id: 1 }).lean()).map(
      (d) => ({ seq: d._id as unknown as number, id: (d as { eventId: string }).eventId }),
    );

  it('numbers a batch on from the head in its order, and skips entries already logged', async () => {
    const t = await tenant();
    const repo = new WebhookLogRepository(node.infra.mongo.tenantDb(t));
    expect(await repo.appendAll([entry('a'), entry('b')])).toBe(2);
    expect(await repo.appendAll([entry('b'), entry('c'), entry('c'), entry('a'), entry('d')])).toBe(2);
    expect(await logOf(t)).toEqual([
      { seq: 1, id: 'a' },
      { seq: 2, id: 'b' },
      { seq: 3, id: 'c' },
      { seq: 4, id: 'd' },
    ]);
  });

  it('goes on after another publisher took a number in the middle of its batch', async () => {
    const t = await tenant();
    const db = node.infra.mongo.tenantDb(t);
    const real = new WebhookLogRepository(db);
    await real.appendAll([entry('first')]);
    let reads = 0;
    // A publisher with no head of its own yet (another node): between its read of the head and its
    // insert, another one logs 'other' at head + 3.
    const racing = Object.assign(Object.create(new WebhookLogRepository(db)) as WebhookLogRepository, {
      head: async () => {
        const h = await real.head();
        if (++reads === 1)
          await db.models.WebhookEvent.collection.insertOne({
            _id: (h + 3) as never,
            eventId: 'other',
            type: 'participant.left',
            occurredAt: new Date(),
            publishedAt: new Date(),
            data: {},
          });
        return h;
      },
    });
    expect(await racing.appendAll(['a', 'b', 'c', 'd'].map((id) => entry(id)))).toBe(4);
    expect(await logOf(t)).toEqual([
      { seq: 1, id: 'first' },
      { seq: 2, id: 'a' },
      { seq: 3, id: 'b' },
      { seq: 4, id: 'other' },
      { seq: 5, id: 'c' },
      { seq: 6, id: 'd' },
    ]);
  });

  it('keeps the numbers gap-free and every entry once when publishers race over overlapping entries', async () => {
    const t = await tenant();
    const ids = Array.from({ length: 60 }, (_, i) => `e${String(i).padStart(2, '0')}`);
    // Eight publishers, each with its own repository (as on separate nodes), each logging a window of the entries.
    const publishers = Array.from({ length: 8 }, (_, p) => ({
      repo: new WebhookLogRepository(node.infra.mongo.tenantDb(t)),
      entries: ids.slice(p * 6, p * 6 + 20).map((id) => entry(id)),
    }));
    const appended = await Promise.all(publishers.map((p) => p.repo.appendAll(p.entries)));
    const log = await logOf(t);
    expect(log.map((l) => l.seq)).toEqual(ids.map((_, i) => i + 1));
    expect(log.map((l) => l.id).sort()).toEqual(ids);
    expect(appended.reduce((a, b) => a + b, 0)).toBe(ids.length);
  });

  it('numbers on from the head it last wrote without reading the head, and reads it when another publisher went on', async () => {
    const t = await tenant();
    const db = node.infra.mongo.tenantDb(t);
    const real = new WebhookLogRepository(db);
    let headReads = 0;
    const counted = Object.assign(Object.create(real) as WebhookLogRepository, {
      head: async () => {
        headReads += 1;
        return real.head();
      },
    });
    expect(await counted.appendAll([entry('a')])).toBe(1);
    expect(headReads).toBe(1);
    expect(await counted.appendAll([entry('b'), entry('c')])).toBe(2);
    expect(headReads).toBe(1);
    // Another node (its own heads) logs two entries: this publisher's head is behind, its insert is refused.
    expect(await new WebhookLogRepository(db).appendAll([entry('x'), entry('y')])).toBe(2);
    expect(await counted.appendAll([entry('d')])).toBe(1);
    expect(headReads).toBe(2);
    expect(await logOf(t)).toEqual(['a', 'b', 'c', 'x', 'y', 'd'].map((id, i) => ({ seq: i + 1, id })));
  });

  it('finds a head other publishers moved far on by reads by _id where its server sorts without the index', async () => {
    const t = await tenant();
    const db = node.infra.mongo.tenantDb(t);
    const mine = new WebhookLogRepository(db);
    expect(await mine.appendAll([entry('a')])).toBe(1);
    // Another node logs 1,000 entries in steps: this publisher's head is 1,000 behind.
    const other = new WebhookLogRepository(db);
    for (let i = 0; i < 10; i++)
      expect(await other.appendAll(Array.from({ length: 100 }, (_, j) => entry(`o${i * 100 + j}`)))).toBe(100);
    const sorted = jest.spyOn(db.models.WebhookEvent, 'findOne');
    try {
      expect(await mine.appendAll([entry('b'), entry('c')])).toBe(2);
      expect(await mine.head()).toBe(1003);
      // mongo-java-server reads and sorts the whole log for a sort by _id (30 s at 539,000 entries under load).
      expect(sorted).toHaveBeenCalledTimes(db.server.idOrderFromIndex ? 2 : 0);
    } finally {
      sorted.mockRestore();
    }
    const log = await logOf(t);
    expect(log.map((l) => l.seq)).toEqual(Array.from({ length: 1003 }, (_, i) => i + 1));
    expect(log.slice(-2).map((l) => l.id)).toEqual(['b', 'c']);
    // A process's first head: from a multiple of the log's size found stored (the first 700 were pruned:
    // 303 kept, 1,212 is past the head, so the third multiple, 909), without sorting, where it sorts so.
    await db.models.WebhookEvent.deleteMany({ _id: { $lt: 701 } });
    const first = jest.spyOn(db.models.WebhookEvent, 'findOne');
    try {
      expect(await new WebhookLogRepository(db).head()).toBe(1003);
      expect(first).toHaveBeenCalledTimes(db.server.idOrderFromIndex ? 1 : 0);
    } finally {
      first.mockRestore();
    }
    // The newest kept alone, far above the log's size times the looks: read by sorting, whatever the server.
    await db.models.WebhookEvent.deleteMany({ _id: { $lt: 1003 } });
    expect(await new WebhookLogRepository(db).head()).toBe(1003);
    await db.models.WebhookEvent.deleteMany({});
    expect(await new WebhookLogRepository(db).head()).toBe(0);
  });

  it('reads ranges, pages and the oldest entry kept without a range of _id where its server scans for one', async () => {
    const t = await tenant();
    const db = node.infra.mongo.tenantDb(t);
    const types = (i: number) => (i % 3 === 0 ? 'participant.left' : 'participant.joined');
    await db.models.WebhookEvent.collection.insertMany(
      Array.from({ length: 1200 }, (_, k) => ({
        _id: (k + 1) as never,
        eventId: `n${k + 1}`,
        type: types(k + 1),
        occurredAt: new Date(),
        publishedAt: new Date(),
        data: {},
      })),
    );
    // The retention took the first 300.
    await db.models.WebhookEvent.deleteMany({ _id: { $lt: 301 } });
    const kept = Array.from({ length: 900 }, (_, k) => k + 301);
    const left = kept.filter((n) => types(n) === 'participant.left');
    const repo = new WebhookLogRepository(db);
    const ranged = jest.spyOn(db.models.WebhookEvent, 'find');
    try {
      expect(await repo.head()).toBe(1200);
      expect(await repo.oldest()).toBe(301);
      const seqs = (rs: { _id: unknown }[]) => rs.map((r) => r._id as number);
      expect(seqs(await repo.range(0, 1200, ['participant.left'], 50))).toEqual(left.slice(0, 50));
      expect(seqs(await repo.range(700, 1000, ['participant.left'], 1000))).toEqual(
        left.filter((n) => n > 700 && n <= 1000),
      );
      expect(seqs(await repo.range(1150, 1200, ['participant.joined', 'participant.left'], 10))).toEqual(
        kept.slice(-50, -40),
      );
      expect(seqs(await repo.page(0, 100))).toEqual(kept.slice(0, 100));
      expect(seqs(await repo.page(1190, 100))).toEqual(kept.slice(-10));
      expect(seqs(await repo.page(450, 20, ['participant.left']))).toEqual(left.filter((n) => n > 450).slice(0, 20));
      expect(await repo.page(1200, 10)).toEqual([]);
      // mongo-java-server reads and matches every entry for a range of _id (a scan of the log).
      const byRange = ranged.mock.calls.filter((c) => (c[0] as { _id?: { $gt?: number } })?._id?.$gt !== undefined);
      expect(byRange.length).toBe(db.server.idOrderFromIndex ? 6 : 0);
    } finally {
      ranged.mockRestore();
    }
  });

  it('starts again from 1 when the log it knew the head of was emptied (a tenant removed and made again)', async () => {
    const t = await tenant();
    const db = node.infra.mongo.tenantDb(t);
    const repo = new WebhookLogRepository(db);
    expect(await repo.appendAll([entry('a'), entry('b'), entry('c')])).toBe(3);
    await db.models.WebhookEvent.deleteMany({});
    expect(await repo.appendAll([entry('d')])).toBe(1);
    expect(await logOf(t)).toEqual([{ seq: 1, id: 'd' }]);
  });
});
