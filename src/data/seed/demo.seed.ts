import type { TenantDb } from '../mongo.js';
import { sortKeys } from '../models/user.model.js';
import { seedDemoContent } from './demo-content.seed.js';

/** Demo users of the `demo` tenant (password for each in the embedded identity provider: `demo`). */
export const DEMO_USERS = [
  { username: 'admin', displayName: 'Ada Admin', role: 'admin', kind: 'person' },
  { username: 'alice', displayName: 'Dr Alice Moreau', role: 'clinician', kind: 'person' },
  { username: 'bob', displayName: 'Dr Bob Okafor', role: 'clinician', kind: 'person' },
  { username: 'pat', displayName: 'Pat Patient', role: 'patient', kind: 'person' },
  { username: 'sam', displayName: 'Sam Support', role: 'support', kind: 'person' },
  { username: 'headset-1', displayName: 'Ward 3 headset', role: 'device', kind: 'device' },
] as const;

export const DEMO_PASSWORD = 'demo';

/** Upserts the demo users by username, then the demo content; safe to run at every start. */
export async function seedDemoUsers(db: TenantDb): Promise<void> {
  const inserted: string[] = [];
  for (const u of DEMO_USERS) {
    const r = await db.models.User.updateOne(
      { username: u.username },
      {
        $setOnInsert: {
          ...u,
          idpSubject: u.username,
          email: `${u.username}@demo.localhost`,
          status: 'active',
          ...sortKeys(u.displayName, u.username),
        },
      },
      { upsert: true },
    );
    if (r.upsertedId) inserted.push(String(r.upsertedId));
  }
  if (inserted.length) await db.usersChanged(inserted);
  await seedDemoContent(db);
}
