import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { seedDemoUsers, DEMO_USERS } from '../../../src/data/seed/demo.seed.js';
import { DEMO_MEETING_CODE } from '../../../src/data/seed/demo-content.seed.js';
import type { TenantDb } from '../../../src/data/mongo.js';

async function counts(db: TenantDb) {
  const m = db.models;
  return {
    users: await m.User.countDocuments().exec(),
    events: await m.Event.countDocuments().exec(),
    groups: await m.Group.countDocuments().exec(),
    favourites: await m.Favourite.countDocuments().exec(),
    notices: await m.Notice.countDocuments().exec(),
  };
}

describe('demo tenant seed (npm start)', () => {
  let node: TestNode;
  let db: TenantDb;

  beforeAll(async () => {
    node = await startTestNode({ SEED_DEMO: 'true' });
    db = node.infra.mongo.tenantDb('demo');
  });
  afterAll(async () => node.destroy());

  it('creates the demo tenant with its users and content at start', async () => {
    const ping = await node.http.get('/api/tenant/ping', { tenant: 'demo' });
    expect(ping.status).toBe(200);
    expect(await counts(db)).toEqual({ users: DEMO_USERS.length, events: 1, groups: 1, favourites: 1, notices: 1 });
    const event = await db.models.Event.findOne({ meetingCode: DEMO_MEETING_CODE }).lean().exec();
    expect(event).toMatchObject({ name: 'Demo consultation', status: 'scheduled' });
    expect(event!.startAt.getTime()).toBeGreaterThan(Date.now());
    expect(event!.participantIds).toHaveLength(2);
  });

  it('seeds again without duplicating or undoing a change', async () => {
    await db.models.Event.updateOne(
      { meetingCode: DEMO_MEETING_CODE },
      { $set: { name: 'Renamed by a demo user' } },
    ).exec();
    await seedDemoUsers(db);
    await seedDemoUsers(db);
    expect(await counts(db)).toEqual({ users: DEMO_USERS.length, events: 1, groups: 1, favourites: 1, notices: 1 });
    expect((await db.models.Event.findOne({ meetingCode: DEMO_MEETING_CODE }).lean().exec())?.name).toBe(
      'Renamed by a demo user',
    );
  });
});
