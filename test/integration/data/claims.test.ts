import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import type { TenantDb } from '../../../src/data/mongo.js';
import { SessionRepository } from '../../../src/data/repositories/session.repository.js';
import { claimedUpdate } from '../../../src/data/repositories/transition-claim.js';
import { FERRETDB_TRAITS } from '../../../src/data/server-traits.js';

describe('single-winner conditional updates (claims) on the MongoDB-protocol server', () => {
  let node: TestNode;
  let db: TenantDb;

  beforeAll(async () => {
    node = await startTestNode();
    await node.services.tenants.create({ name: 'claims', displayName: 'Claims Clinic' });
    db = node.infra.mongo.tenantDb('claims');
  });
  afterAll(async () => node.destroy());

  it('lets exactly one concurrent refresh consume a refresh token', async () => {
    const sessions = new SessionRepository(db);
    for (let i = 0; i < 10; i++) {
      const id = `s-${i}-${new Types.ObjectId().toHexString()}`;
      await db.models.Session.create({
        _id: id,
        userId: new Types.ObjectId(),
        method: 'oidc',
        refreshHash: `h0-${id}`,
        expiresAt: new Date(Date.now() + 60_000),
      });
      const now = new Date();
      const results = await Promise.all(
        ['a', 'b', 'c'].map((n) => sessions.rotate(id, `h0-${id}`, `h1-${n}-${id}`, now)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const stored = await db.models.Session.findById(id).lean().exec();
      expect(stored?.previousHashes).toEqual([`h0-${id}`]);
    }
  });

  it("lets exactly one concurrent refresh win through FerretDB's claims too", async () => {
    const sessions = new SessionRepository({ ...db, server: FERRETDB_TRAITS });
    for (let i = 0; i < 10; i++) {
      const id = `f-${i}-${new Types.ObjectId().toHexString()}`;
      await db.models.Session.create({
        _id: id,
        userId: new Types.ObjectId(),
        method: 'oidc',
        refreshHash: `h0-${id}`,
        expiresAt: new Date(Date.now() + 60_000),
      });
      const now = new Date();
      const results = await Promise.all(
        ['a', 'b', 'c'].map((n) => sessions.rotate(id, `h0-${id}`, `h1-${n}-${id}`, now)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    }
  });

  it('leaves no claim behind once the winner has written (FerretDB adapter)', async () => {
    const ferret = { ...db, server: FERRETDB_TRAITS };
    const doc = await db.models.Notice.create({ title: 't', body: 'b', createdBy: new Types.ObjectId() });
    const won = await claimedUpdate(
      ferret,
      db.models.Notice,
      `${doc._id}:clear`,
      { _id: doc._id, current: true },
      { $set: { current: false } },
    );
    expect(won).toMatchObject({ current: false });
    expect(await db.conn.collection('_transition_claims').countDocuments({})).toBe(0);
    const again = await claimedUpdate(
      ferret,
      db.models.Notice,
      `${doc._id}:clear`,
      { _id: doc._id, current: true },
      { $set: { current: false } },
    );
    expect(again).toBeNull();
  });
});
