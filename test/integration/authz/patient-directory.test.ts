import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { connect, type HubClient } from '../../support/hub-client.js';
import type { HubRoleHandle } from '../../../src/hub/hub.role.js';
import { rooms } from '../../../src/realtime/rooms.js';

/**
 * A patient sees their care team of the directory (people of their events and groups), on REST, GraphQL
 * and hub presence pushes; staff see everyone; TenantConfig `directory.patientScope: 'tenant'` restores
 * the whole directory for patients.
 */
describe('patient directory policy', () => {
  let node: TestNode;
  const tokens: Record<string, Record<string, string>> = { pdir: {}, pdirall: {} };
  const ids: Record<string, Record<string, string>> = { pdir: {}, pdirall: {} };
  const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
  const USERS = [
    ['pat', 'patient'],
    ['cara', 'clinician'],
    ['gus', 'clinician'],
    ['alice', 'clinician'],
    ['pam', 'patient'],
  ] as const;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    for (const tenant of ['pdir', 'pdirall'] as const) {
      for (const [u, role] of USERS) {
        ids[tenant]![u] = await createUser(node, tenant, { username: u, role, displayName: u.toUpperCase() });
        tokens[tenant]![u] = await tokenFor(node, tenant, u);
      }
      // cara's consultation with pat; gus shares a group with pat; alice and pam are unrelated to pat.
      const ev = await node.http.post('/api/events/create', {
        tenant,
        token: tokens[tenant]!.cara,
        body: { name: 'Consult', startAt: inHours(1), endAt: inHours(2), participants: [{ userId: ids[tenant]!.pat }] },
      });
      expect(ev.status).toBe(201);
      const { db } = await node.services.tenants.require(tenant);
      await db.models.Group.create({
        ownerId: new Types.ObjectId(ids[tenant]!.gus),
        name: 'Rehab',
        participantIds: [new Types.ObjectId(ids[tenant]!.pat)],
      });
    }
    const { db } = await node.services.tenants.require('pdirall');
    await db.models.TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'directory.patientScope': 'tenant' } }).exec();
  });
  afterAll(async () => node?.destroy());

  const names = (items: { username: string }[]) => items.map((c) => c.username).sort();
  const rest = async (tenant: string, user: string, query = '') => {
    const r = await node.http.get(`/api/contacts/get?take=100${query}`, { tenant, token: tokens[tenant]![user] });
    expect(r.status).toBe(200);
    return { names: names(r.body.items), total: r.body.total as number };
  };
  const gql = async (tenant: string, user: string) => {
    const r = await node.http.post('/graphql', {
      tenant,
      token: tokens[tenant]![user],
      body: {
        query:
          '{ byName: myContacts(paging: { take: 100 }) { total items { username } } favFirst: myContacts(sortType: FAVOURITES_FIRST, paging: { take: 100 }) { items { username } } alphabets: contactAlphabets { letter count } }',
      },
    });
    expect(r.body.errors).toBeUndefined();
    const d = r.body.data;
    return {
      byName: names(d.byName.items),
      total: d.byName.total,
      favFirst: names(d.favFirst.items),
      inAlphabets: d.alphabets.reduce((n: number, b: { count: number }) => n + b.count, 0),
    };
  };

  it('shows a patient only their care team on REST and GraphQL, and a clinician everyone', async () => {
    expect(await rest('pdir', 'pat')).toEqual({ names: ['cara', 'gus'], total: 2 });
    expect(await rest('pdir', 'pat', '&name=ALICE')).toEqual({ names: [], total: 0 });
    expect(await rest('pdir', 'pat', '&frequent=true')).toEqual({ names: ['cara'], total: 1 });
    expect(await gql('pdir', 'pat')).toEqual({
      byName: ['cara', 'gus'],
      total: 2,
      favFirst: ['cara', 'gus'],
      inAlphabets: 2,
    });
    expect(await rest('pdir', 'cara')).toEqual({ names: ['alice', 'gus', 'pam', 'pat'], total: 4 });
    expect(await gql('pdir', 'cara')).toEqual({
      byName: ['alice', 'gus', 'pam', 'pat'],
      total: 4,
      favFirst: ['alice', 'gus', 'pam', 'pat'],
      inAlphabets: 4,
    });
  });

  it("returns the whole directory to patients when the tenant's policy is 'tenant'", async () => {
    expect(await rest('pdirall', 'pat')).toEqual({ names: ['alice', 'cara', 'gus', 'pam'], total: 4 });
    expect((await gql('pdirall', 'pat')).byName).toEqual(['alice', 'cara', 'gus', 'pam']);
  });

  /** Connects `watcher`, then `others` in order; resolves with the others' online pushes the watcher saw, up to `lastExpected`'s. */
  async function pushesSeen(
    tenant: string,
    watcher: string,
    others: string[],
    lastExpected: string,
  ): Promise<string[]> {
    const w = await connect(node.url!, tenant, { token: tokens[tenant]![watcher] });
    const seen: string[] = [];
    const sockets: HubClient[] = [w];
    try {
      const byId = Object.fromEntries(Object.entries(ids[tenant]!).map(([u, id]) => [id, u]));
      const done = new Promise<void>((resolve) =>
        w.on('userStatus', (s) => {
          if (!s.online || byId[s.userId] === watcher) return;
          seen.push(byId[s.userId] ?? s.userId);
          if (byId[s.userId] === lastExpected) resolve();
        }),
      );
      for (const u of others) sockets.push(await connect(node.url!, tenant, { token: tokens[tenant]![u] }));
      await done;
      return seen;
    } finally {
      for (const s of sockets) s.close();
    }
  }

  it("pushes a patient's socket presence of the care team only; a clinician's socket gets everyone's", async () => {
    // alice and pam connect before cara: their pushes, had they been sent to pat, would arrive first.
    expect(await pushesSeen('pdir', 'pat', ['alice', 'pam', 'cara'], 'cara')).toEqual(['cara']);
    expect(await pushesSeen('pdir', 'gus', ['alice', 'pam', 'cara'], 'cara')).toEqual(['alice', 'pam', 'cara']);
  });

  it("pushes a patient everyone's presence when the tenant's policy is 'tenant'", async () => {
    expect(await pushesSeen('pdirall', 'pat', ['alice', 'pam', 'cara'], 'cara')).toEqual(['alice', 'pam', 'cara']);
  });

  it("keeps a patient limited to the care team out of the previous release's tenant-wide presence pushes", async () => {
    // Nodes of the previous release push presence to the tenant room less tenant-patients (decision 1143):
    // while they run beside this one, its care-team patients must still be that exception.
    const io = (node.roles.get('hub') as HubRoleHandle).io;
    const [pat, gus] = await Promise.all(
      ['pat', 'gus'].map((u) => connect(node.url!, 'pdir', { token: tokens.pdir![u] })),
    );
    try {
      const seen = (c: HubClient, who: string) => {
        const got: string[] = [];
        const done = new Promise<string[]>((resolve) =>
          c.on('userStatus', (s) => {
            // Only this test's pushes: the two connections' own online pushes may come in between.
            if (s.userId === 'old-form' || s.userId.startsWith('end-')) got.push(s.userId);
            if (s.userId === `end-${who}`) resolve(got);
          }),
        );
        return done;
      };
      const [patSeen, gusSeen] = [seen(pat, 'pat'), seen(gus, 'gus')];
      const at = new Date().toISOString();
      io.to(rooms.tenant('pdir'))
        .except(rooms.tenantPatients('pdir'))
        .emit('userStatus', { userId: 'old-form', online: true, at });
      // A push to each one's own room after it: a socket's pushes from one node arrive in order.
      for (const who of ['pat', 'gus'])
        io.to(rooms.user('pdir', ids.pdir![who]!)).emit('userStatus', { userId: `end-${who}`, online: true, at });
      expect(await patSeen).toEqual(['end-pat']);
      expect(await gusSeen).toEqual(['old-form', 'end-gus']);
    } finally {
      pat.close();
      gus.close();
    }
  });
});
