import type { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';

/** Join code of the demo consultation (alphabet of src/core/meetings/event.service.ts: no I, O, 0, 1). */
export const DEMO_MEETING_CODE = 'DEMPATWARD';

type Ids = Record<string, Types.ObjectId>;

async function userIds(db: TenantDb): Promise<Ids> {
  const users = await db.models.User.find({}, { username: 1 }).lean().exec();
  return Object.fromEntries(users.map((u) => [u.username, u._id as Types.ObjectId]));
}

/** Tomorrow at 09:00 UTC: the demo consultation lies ahead when the demo tenant is first seeded. */
function tomorrowAt9(): { startAt: Date; endAt: Date } {
  const d = new Date();
  const startAt = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1, 9));
  return { startAt, endAt: new Date(startAt.getTime() + 30 * 60_000) };
}

/**
 * Something to look at in the demo tenant: a consultation of Dr Alice with Pat, a ward group, a
 * favourite and a current notice. Each item is written only when missing (natural keys), so the
 * seed runs at every start without duplicating or undoing what a demo user changed.
 */
export async function seedDemoContent(db: TenantDb): Promise<void> {
  const id = await userIds(db);
  const { alice, bob, pat, admin } = id;
  if (!alice || !bob || !pat || !admin) return;
  // The consultation and the group make Pat's care team: written under its cache's marks (decision 1132).
  await db.careTeamWrite(async () => {
    await db.models.Event.updateOne(
      { meetingCode: DEMO_MEETING_CODE },
      {
        $setOnInsert: {
          name: 'Demo consultation',
          nameLower: 'demo consultation',
          description: 'Follow-up of Pat with Dr Alice Moreau',
          ...tomorrowAt9(),
          organizerId: alice,
          status: 'scheduled',
          participants: [
            { userId: alice, role: 'host' },
            { userId: pat, role: 'participant' },
          ],
          participantIds: [alice, pat],
        },
      },
      { upsert: true },
    ).exec();
    await db.models.Group.updateOne(
      { ownerId: alice, name: 'Ward 3 team' },
      { $setOnInsert: { participantIds: [alice, bob, ...(id['headset-1'] ? [id['headset-1']] : [])] } },
      { upsert: true },
    ).exec();
  });
  await db.models.Favourite.updateOne(
    { userId: alice, contactId: bob },
    { $setOnInsert: { userId: alice, contactId: bob } },
    { upsert: true },
  ).exec();
  if ((await db.models.Notice.countDocuments().exec()) === 0) {
    await db.models.Notice.create({
      title: 'Welcome',
      body: 'This is the demo tenant: sign in as any demo user with password "demo".',
      severity: 'info',
      current: true,
      createdBy: admin,
    });
  }
}
