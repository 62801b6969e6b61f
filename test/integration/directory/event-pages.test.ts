import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { as, world, type World } from './fixtures.js';
import { EventRepository, type EventKey } from '../../../src/data/repositories/event.repository.js';
import { EventService } from '../../../src/core/meetings/event.service.js';
import { UserRepository } from '../../../src/data/repositories/user.repository.js';
import type { Principal } from '../../../src/kernel/principal.js';

/** A clinician's list of hundreds of events, many starting at the same time, paged by key (decision 213). */
describe('event list pages by key', () => {
  let w: World;
  const N = 230;
  let expected: string[];

  beforeAll(async () => {
    w = await world('epa', 'epb');
    const db = w.node.infra.mongo.tenantDb(w.tenantA);
    const base = Date.UTC(2030, 0, 1);
    // 46 distinct start times, 5 events each: ties are ordered by _id.
    const docs = Array.from({ length: N }, (_, i) => {
      const startAt = new Date(base + (i % 46) * 3_600_000);
      const alice = new Types.ObjectId(w.a.alice.id);
      const pat = new Types.ObjectId(w.a.pat.id);
      return {
        name: `Consult ${i}`,
        nameLower: `consult ${i}`,
        startAt,
        endAt: new Date(startAt.getTime() + 1_800_000),
        organizerId: i % 3 ? alice : pat,
        participants: [{ userId: alice, role: 'host' }],
        participantIds: i % 3 ? [alice] : [pat, alice],
        attachments: [],
        meetingCode: `PG${String(i).padStart(8, '0')}`,
        status: 'scheduled',
      };
    });
    await db.models.Event.insertMany(docs);
    const all = await db.models.Event.find({}, { _id: 1 }).sort({ startAt: -1, _id: -1 }).lean().exec();
    expected = all.map((e) => String(e._id));
  });
  afterAll(async () => w.node.destroy());

  it('walks the whole list over REST, page after page, exactly in list order', async () => {
    const seen: string[] = [];
    for (let skip = 0; skip < N + 20; skip += 20) {
      const r = await as(w, w.a.alice).get(`/api/events/get?skip=${skip}&take=20`);
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(N);
      seen.push(...r.body.items.map((e: { id: string }) => e.id));
    }
    expect(seen).toEqual(expected);
  });

  it("starts each next page from the previous page's last key, never skipping the events before it", async () => {
    const db = w.node.infra.mongo.tenantDb(w.tenantA);
    const calls: { after?: EventKey; skip: number }[] = [];
    const real = new EventRepository(db);
    const recording = Object.assign(Object.create(real) as EventRepository, {
      list: (userId: Types.ObjectId, q: Parameters<EventRepository['list']>[1]) => {
        calls.push({ after: q.after, skip: q.skip });
        return real.list(userId, q);
      },
    });
    const service = new EventService({
      events: () => recording,
      users: () => new UserRepository(db),
      onlineMany: async () => new Set(),
      canReadMedia: async () => false,
      pageMaxTake: 100,
    });
    const p = { tenant: w.tenantA, userId: w.a.alice.id } as Principal;
    const ids = async (skip: number, take: number) =>
      (await service.list(p, { skip, take })).items.map((e) => String(e._id));
    expect(await ids(0, 25)).toEqual(expected.slice(0, 25));
    for (let skip = 25; skip < 200; skip += 25) expect(await ids(skip, 25)).toEqual(expected.slice(skip, skip + 25));
    expect(calls.slice(1).every((c) => c.after && c.skip === 0)).toBe(true);
    // A page ahead of the walk starts from the nearest key and skips only the gap; going back uses a key too.
    calls.length = 0;
    expect(await ids(210, 10)).toEqual(expected.slice(210, 220));
    expect(await ids(50, 5)).toEqual(expected.slice(50, 55));
    expect(calls).toEqual([
      { after: expect.anything(), skip: 10 },
      { after: expect.anything(), skip: 0 },
    ]);
    // Another caller's walk is their own: pat sees only the events pat attends, from the top.
    const patIds = (
      await service.list({ tenant: w.tenantA, userId: w.a.pat.id } as Principal, { skip: 25, take: 5 })
    ).items.map((e) => String(e._id));
    const patAll = (
      await db.models.Event.find({ participantIds: new Types.ObjectId(w.a.pat.id) }, { _id: 1 })
        .sort({ startAt: -1, _id: -1 })
        .lean()
        .exec()
    ).map((e) => String(e._id));
    expect(patIds).toEqual(patAll.slice(25, 30));
  });
});
