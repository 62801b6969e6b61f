import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { UserRepository } from '../../../src/data/repositories/user.repository.js';
import { PendingUserRepository } from '../../../src/data/repositories/pending-user.repository.js';

/**
 * Bulk updates of hundreds of statements. On FerretDB (SQLite) a single command of more than about 100
 * update statements never returns and wedges the database, so its adapter sends 10 per command; on
 * MongoDB and the test server (mongo-java-server) they go in one command (server-traits.ts).
 */
describe('bulk updates of hundreds of rows', () => {
  let node: TestNode;
  const n = 257;

  beforeAll(async () => {
    node = await startTestNode();
    await node.services.tenants.create({ name: 'bulk' });
  });
  afterAll(async () => node.destroy());

  it('moves lastSeenAt of every user forward, and never back', async () => {
    const db = node.infra.mongo.tenantDb('bulk');
    const ids = Array.from({ length: n }, () => new Types.ObjectId());
    await db.models.User.collection.insertMany(
      ids.map((_id, i) => ({
        _id,
        username: `u${i}`,
        idpSubject: `bulk-u${i}`,
        displayName: `U ${i}`,
        role: 'patient',
        kind: 'person',
        status: 'active',
      })) as never[],
    );
    const repo = new UserRepository(db);
    const at = new Date('2026-01-02T00:00:00Z');
    await repo.touchLastSeenMany(ids.map((userId) => ({ userId, at })));
    await repo.touchLastSeenMany(ids.map((userId) => ({ userId, at: new Date('2026-01-01T00:00:00Z') })));
    expect(await db.models.User.countDocuments({ lastSeenAt: at })).toBe(n);
  });

  it('re-imports hundreds of pending users already stored in one batch', async () => {
    const db = node.infra.mongo.tenantDb('bulk');
    const repo = new PendingUserRepository(db);
    const rows = Array.from({ length: n }, (_, i) => ({
      username: `p${i}`,
      displayName: `P ${i}`,
      role: 'patient',
      rowNumber: i + 2,
    }));
    expect(await repo.upsertMany(rows, 'first')).toEqual({ stored: n, repeats: [] });
    expect(
      await repo.upsertMany(
        rows.map((r) => ({ ...r, displayName: `${r.displayName} again` })),
        'second',
      ),
    ).toEqual({ stored: n, repeats: [] });
    expect(await repo.countForImport('second')).toBe(n);
    expect(await db.models.PendingUser.countDocuments({ username: /^p\d+$/ })).toBe(n);
  });

  // Decision 1180: the import holds no set of the usernames it has seen; the unique index tells a later
  // row repeating an earlier row's username (first wins), in the same batch or a later one, from a
  // re-run of the same rows and from a username an earlier import left pending.
  it("leaves out rows repeating an earlier row's username and rewrites an import's own rows on a re-run", async () => {
    const db = node.infra.mongo.tenantDb('bulk');
    const repo = new PendingUserRepository(db);
    const row = (name: string, rowNumber: number) => ({
      username: name,
      displayName: `${name} ${rowNumber}`,
      role: 'patient',
      rowNumber,
    });
    await repo.upsertMany([row('carried', 2)], 'older');
    const first = [row('r-a', 2), row('r-b', 3), row('r-a', 4), row('carried', 5)];
    expect(await repo.upsertMany(first, 'imp')).toEqual({ stored: 3, repeats: [{ rowNumber: 4, of: 2 }] });
    // The next batch: two repeats of the first batch's rows (one of them the row taken over from the older import).
    const second = [row('r-c', 6), row('r-b', 7), row('carried', 8)];
    expect(await repo.upsertMany(second, 'imp')).toEqual({
      stored: 1,
      repeats: [
        { rowNumber: 7, of: 3 },
        { rowNumber: 8, of: 5 },
      ],
    });
    // A retried job writes its rows again: its own rows under their own numbers are rewritten, repeats stay out.
    expect(await repo.upsertMany(first, 'imp')).toEqual({ stored: 3, repeats: [{ rowNumber: 4, of: 2 }] });
    expect(await repo.upsertMany(second, 'imp')).toEqual({
      stored: 1,
      repeats: [
        { rowNumber: 7, of: 3 },
        { rowNumber: 8, of: 5 },
      ],
    });
    const stored = await db.models.PendingUser.find(
      { importId: 'imp' },
      { _id: 0, username: 1, rowNumber: 1, displayName: 1 },
    )
      .sort({ rowNumber: 1 })
      .lean();
    expect(stored).toEqual([
      { username: 'r-a', rowNumber: 2, displayName: 'r-a 2' },
      { username: 'r-b', rowNumber: 3, displayName: 'r-b 3' },
      { username: 'carried', rowNumber: 5, displayName: 'carried 5' },
      { username: 'r-c', rowNumber: 6, displayName: 'r-c 6' },
    ]);
    // Another import takes the same usernames over: nothing of theirs is a repeat.
    expect(await repo.upsertMany(second, 'next')).toEqual({ stored: 3, repeats: [] });
  });
});
