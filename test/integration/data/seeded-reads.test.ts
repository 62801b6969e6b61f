import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import type { z } from 'zod';
import { startTestNode, type TestNode } from '../../support/node.js';
import { tokenFor } from '../../support/auth.js';
import { connect, type HubClient } from '../../support/hub-client.js';
import { DEMO_USERS } from '../../../src/data/seed/demo.seed.js';
import { API_GROUPS } from '../../../src/http/routes/groups.js';
import type { RouteSpec } from '../../../src/http/routes/route-spec.js';
import type { TenantDb } from '../../../src/data/mongo.js';

/**
 * Every seeded document, and documents shaped as older code wrote them (optional arrays and later
 * fields missing), read through every REST read endpoint, the GraphQL queries and the hub's meeting
 * details as every demo user: no answer is a 5xx, a 200 matches the endpoint's declared schema, and
 * each document is answered 200 to at least one user (so the reads actually ran).
 */
describe('read paths tolerate seeded and older documents', () => {
  let node: TestNode;
  let db: TenantDb;
  const tenant = 'demo';
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    node = await startTestNode({ SEED_DEMO: 'true', ROLES: 'http,hub,actors' });
    db = node.infra.mongo.tenantDb(tenant);
    for (const u of DEMO_USERS) tokens.set(u.username, await tokenFor(node, tenant, u.username));
  });
  afterAll(async () => node?.destroy());

  /** GET routes reading JSON (not the login QR, which creates a code, nor start/stoprecording, which change a meeting). */
  const BINDABLE = new Set(['eventId', 'groupId', 'contactId', 'tenant', 'username']);
  const readRoutes = () =>
    API_GROUPS.flatMap((g) => g.routes.map((r) => ({ base: g.base, spec: r as RouteSpec })))
      .filter(
        ({ spec }) =>
          spec.method === 'get' &&
          spec.response &&
          !spec.binary &&
          (spec.status ?? 200) === 200 &&
          spec.operationId !== 'tenant.startRecording' &&
          spec.operationId !== 'tenant.stopRecording',
      )
      .filter(({ spec }) => [...spec.path.matchAll(/:(\w+)/g)].every((m) => BINDABLE.has(m[1]!)))
      // Reads that need a query parameter no stored document gives (a login code's `code`) have their own tests.
      .filter(({ spec }) => !spec.query || (spec.query as z.ZodType).safeParse({}).success);

  /** Every binding of a route's path parameters to the tenant's stored documents. */
  async function bindings(path: string): Promise<Record<string, string>[]> {
    const names = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    if (names.length === 0) return [{}];
    const users = await db.models.User.find({}, { username: 1 }).lean().exec();
    const ids = (docs: { _id: unknown }[]) => docs.map((d) => String(d._id));
    if (names.includes('eventId'))
      return ids(await db.models.Event.find({}, { _id: 1 }).lean().exec()).map((eventId) => ({ eventId }));
    if (names.includes('groupId'))
      return ids(await db.models.Group.find({}, { _id: 1 }).lean().exec()).map((groupId) => ({ groupId }));
    if (names.includes('contactId')) return ids(users).map((contactId) => ({ contactId }));
    return users.map((u) => ({ tenant, username: String(u.username) }));
  }

  const fill = (path: string, b: Record<string, string>) =>
    path.replace(/:(\w+)/g, (_, k: string) => encodeURIComponent(b[k]!));

  async function readEverything(): Promise<void> {
    const unanswered: string[] = [];
    for (const { base, spec } of readRoutes()) {
      for (const b of await bindings(spec.path)) {
        const url = `${base}${fill(spec.path, b)}`;
        let served = false;
        for (const [username, token] of tokens) {
          const r = await node.http.get(url, { tenant, token });
          expect({ url, username, status: r.status, body: r.status >= 500 ? r.body : undefined }).toEqual({
            url,
            username,
            status: expect.any(Number),
            body: undefined,
          });
          expect(r.status).toBeLessThan(500);
          if (r.status !== 200) continue;
          const parsed = (spec.response as z.ZodType).safeParse(r.body);
          expect({ url, username, issues: parsed.success ? [] : parsed.error.issues }).toEqual({
            url,
            username,
            issues: [],
          });
          served = true;
        }
        if (!served) unanswered.push(url);
      }
    }
    expect(unanswered).toEqual([]);
  }

  const GRAPHQL = `{
    me { id username displayName role kind contact { id displayName initial online favourite role lastSeenAt } }
    myContacts { total items { id displayName initial kind online favourite } }
    contactAlphabets { letter count }
    myNotice { id title body severity createdAt seen }
    tenantConfig { tenant displayName locale timezone features { recording chat rapidConnect guestJoin } meetings { ringTimeoutSeconds heartbeatSeconds } }
    tenantSecurityRules { __typename }
    hasPin
  }`;

  async function readGraphql(): Promise<void> {
    const groups = (await db.models.Group.find({}, { _id: 1, ownerId: 1 }).lean().exec()).map((g) => String(g._id));
    for (const [username, token] of tokens) {
      const r = await node.http.post('/graphql', { tenant, token, body: { query: GRAPHQL } });
      const codes = (r.body.errors ?? []).map((e: { extensions?: { code?: string } }) => e.extensions?.code);
      expect({ username, status: r.status, internal: codes.filter((c: string) => c === 'internal') }).toEqual({
        username,
        status: 200,
        internal: [],
      });
      expect(r.body.data?.me?.username).toBe(username);
      for (const groupId of groups) {
        const g = await node.http.post('/graphql', {
          tenant,
          token,
          body: {
            query:
              'query($id: ID!) { groupById(groupId: $id) { id name ownerId participantCount owner { id displayName } participants { id displayName online } } }',
            variables: { id: groupId },
          },
        });
        expect({
          username,
          groupId,
          status: g.status,
          errors: (g.body.errors ?? []).filter(
            (e: { extensions?: { code?: string } }) => e.extensions?.code === 'internal',
          ),
        }).toEqual({ username, groupId, status: 200, errors: [] });
      }
    }
    // The group owner reads every group field.
    for (const groupId of groups) {
      const g = await node.http.post('/graphql', {
        tenant,
        token: tokens.get('alice'),
        body: {
          query: 'query($id: ID!) { groupById(groupId: $id) { id participantCount participants { id } } }',
          variables: { id: groupId },
        },
      });
      expect(g.body.errors).toBeUndefined();
      expect(g.body.data.groupById.id).toBe(groupId);
    }
  }

  async function readMeetingDetails(): Promise<void> {
    const events = await db.models.Event.find({}, { _id: 1 }).lean().exec();
    const socket: HubClient = await connect(node.url!, tenant, { token: tokens.get('alice') });
    try {
      for (const e of events) {
        const ack = await socket.timeout(10_000).emitWithAck('getMeetingDetails', { eventId: String(e._id) });
        expect({ eventId: String(e._id), ack: ack.ok ? 'ok' : ack.error.code }).toEqual({
          eventId: String(e._id),
          ack: 'ok',
        });
      }
    } finally {
      socket.close();
    }
  }

  it('reads every seeded document through every read endpoint', async () => {
    expect(await db.models.Event.countDocuments().exec()).toBeGreaterThan(0);
    await readEverything();
    await readGraphql();
    await readMeetingDetails();
  });

  it('reads documents written by older code: optional arrays and later fields missing', async () => {
    const id = Object.fromEntries(
      (await db.models.User.find({}, { username: 1 }).lean().exec()).map((u) => [u.username, u._id as Types.ObjectId]),
    );
    const now = new Date();
    const later = new Date(now.getTime() + 86_400_000);
    // Raw inserts: the shapes older code and seeds left in tenant databases, not what today's models write.
    await db.conn.collection('events').insertMany([
      {
        name: 'Old consultation',
        nameLower: 'old consultation',
        startAt: later,
        endAt: new Date(later.getTime() + 1_800_000),
        organizerId: id.alice,
        status: 'scheduled',
        meetingCode: 'OLDCNSLTA2',
        participants: [{ userId: id.alice, role: 'host' }, { userId: id.pat }],
        participantIds: [id.alice, id.pat],
      },
      {
        name: 'Oldest consultation',
        nameLower: 'oldest consultation',
        startAt: later,
        endAt: new Date(later.getTime() + 1_800_000),
        organizerId: id.alice,
        status: 'scheduled',
        meetingCode: 'OLDCNSLTB3',
        participants: [{ userId: id.alice, role: 'host' }],
        participantIds: [id.alice],
        attachments: null,
      },
    ]);
    await db.conn.collection('groups').insertOne({ ownerId: id.alice, name: 'Old group' });
    await db.conn
      .collection('users')
      .insertOne({ username: 'olduser', idpSubject: 'olduser', displayName: 'Old User', role: 'clinician' });
    tokens.set('olduser', await tokenFor(node, tenant, 'olduser'));
    await db.conn.collection('notices').updateMany({}, { $set: { current: false } });
    await db.conn
      .collection('notices')
      .insertOne({ title: 'Old notice', body: 'Written before severity existed', current: true, createdBy: id.admin });
    await readEverything();
    await readGraphql();
    await readMeetingDetails();
  });
});
