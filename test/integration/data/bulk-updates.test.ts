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
    expect(await repo.upsertMany(rows, 'first')).toBe(n);
    expect(
      await repo.upsertMany(
        rows.map((r) => ({ ...r, displayName: `${r.displayName} again` })),
        'second',
      ),
    ).toBe(n);
    expect(await repo.countForImport('second')).toBe(n);
    expect(await db.models.PendingUser.countDocuments()).toBe(n);
  });
});
