import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Types } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, freePort, tokenFor } from '../../support/auth.js';
import { connect } from '../../support/hub-client.js';
import { inHours } from '../../support/events.js';
import { EventRepository } from '../../../src/data/repositories/event.repository.js';
import { GroupRepository } from '../../../src/data/repositories/group.repository.js';
import { CareTeamStore } from '../../../src/data/stores/care-team.store.js';
import { careTeamWrite } from '../../../src/data/care-team-writes.js';
import { createRedis } from '../../../src/data/redis.js';
import { DirectoryScope } from '../../../src/core/directory/directory-scope.js';

/**
 * Decision 1132: a patient's care team is kept in Redis between asks, and every write that can change
 * it, whichever entrance made it, retires the tenant's entries. The repositories' `careTeamOf` are
 * counted on their prototypes: an ask served from the cache runs neither.
 */
describe('care-team cache', () => {
  let node: TestNode;
  const A = 'ctca';
  const B = 'ctcb';
  const ids: Record<string, Record<string, string>> = { [A]: {}, [B]: {} };
  const eventQueries = jest.spyOn(EventRepository.prototype, 'careTeamOf');
  const groupQueries = jest.spyOn(GroupRepository.prototype, 'careTeamOf');
  const queries = () => eventQueries.mock.calls.length + groupQueries.mock.calls.length;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    for (const tenant of [A, B])
      for (const [u, role, kind] of [
        ['pat', 'patient', 'person'],
        ['cara', 'clinician', 'person'],
        ['gus', 'clinician', 'person'],
        ['dora', 'clinician', 'person'],
        ['headset', 'device', 'device'],
      ] as const)
        ids[tenant]![u] = await createUser(node, tenant, { username: u, role, kind, displayName: u });
  });
  afterAll(async () => {
    eventQueries.mockRestore();
    groupQueries.mockRestore();
    await node?.destroy();
  });

  const oid = (tenant: string, u: string) => new Types.ObjectId(ids[tenant]![u]);
  const events = (tenant: string) => new EventRepository(node.infra.mongo.tenantDb(tenant));
  const groups = (tenant: string) => new GroupRepository(node.infra.mongo.tenantDb(tenant));
  /** The patient's care team as usernames of `tenant` (ids unknown there as themselves). */
  const teamOf = async (tenant: string, userId: string, scope = node.services.directoryScope) => {
    const byId = Object.fromEntries(Object.entries(ids[tenant]!).map(([u, id]) => [id, u]));
    const team = await scope.visibleTo({ tenant, userId, role: 'patient' });
    return team!.map((id) => byId[String(id)] ?? String(id)).sort();
  };
  /** Asks twice; the second ask must come from the cache. */
  const cachedTeam = async (tenant: string, userId: string) => {
    const first = await teamOf(tenant, userId);
    const before = queries();
    expect(await teamOf(tenant, userId)).toEqual(first);
    expect(queries()).toBe(before);
    return first;
  };
  const newEvent = (tenant: string, organizer: string, participants: Types.ObjectId[]) =>
    events(tenant).create({
      name: 'Consult',
      startAt: new Date(),
      endAt: new Date(Date.now() + 3_600_000),
      organizerId: oid(tenant, organizer),
      participants: participants.map((userId) => ({ userId, role: 'participant' as const })),
      attachments: [],
      meetingCode: randomBytes(4).toString('hex'),
    });

  it("serves a patient's second ask from the cache: service, REST contacts and the hub's connection rooms", async () => {
    const pat = ids[A]!.pat!;
    await newEvent(A, 'cara', [oid(A, 'pat')]);
    const before = queries();
    expect(await teamOf(A, pat)).toEqual(['cara']);
    expect(queries()).toBe(before + 2);
    expect(await teamOf(A, pat)).toEqual(['cara']);
    expect(queries()).toBe(before + 2);
    const token = await tokenFor(node, A, 'pat');
    const r = await node.http.get('/api/contacts/get?take=100', { tenant: A, token });
    expect(r.body.items.map((c: { username: string }) => c.username)).toEqual(['cara']);
    expect(queries()).toBe(before + 2);
    // The hub asks for the connection's directory rooms before the client sees `connect`.
    const socket = await connect(node.url!, A, { token });
    socket.close();
    expect(queries()).toBe(before + 2);
  });

  it('shows the next ask every write that can change a care team, and keeps the entry across one that cannot', async () => {
    const pat = ids[B]!.pat!;
    const me = oid(B, 'pat');
    expect(await cachedTeam(B, pat)).toEqual([]);
    const e = await newEvent(B, 'cara', [me]);
    expect(await cachedTeam(B, pat)).toEqual(['cara']);
    await events(B).update(e._id, oid(B, 'cara'), { participants: [{ userId: oid(B, 'gus'), role: 'participant' }] });
    expect(await cachedTeam(B, pat)).toEqual([]);
    await events(B).update(e._id, oid(B, 'cara'), {
      participants: [
        { userId: me, role: 'participant' },
        { userId: oid(B, 'gus'), role: 'participant' },
      ],
    });
    expect(await cachedTeam(B, pat)).toEqual(['cara', 'gus']);
    await events(B).addDevice(e._id, oid(B, 'headset'));
    expect(await cachedTeam(B, pat)).toEqual(['cara', 'gus', 'headset']);
    await events(B).transition(e._id, ['scheduled'], 'cancelled', { cancelledAt: new Date() });
    expect(await cachedTeam(B, pat)).toEqual([]);

    const g = await groups(B).create(oid(B, 'gus'), 'Rehab', [me]);
    expect(await cachedTeam(B, pat)).toEqual(['gus']);
    await groups(B).addParticipants(g._id, oid(B, 'gus'), [oid(B, 'dora')]);
    expect(await cachedTeam(B, pat)).toEqual(['dora', 'gus']);
    await groups(B).removeParticipants(g._id, oid(B, 'gus'), [me]);
    expect(await cachedTeam(B, pat)).toEqual([]);

    // A start changes no care team: the entry stays.
    const started = await newEvent(B, 'dora', [me]);
    expect(await cachedTeam(B, pat)).toEqual(['dora']);
    const before = queries();
    await events(B).transition(started._id, ['scheduled'], 'started', { startedAt: new Date() });
    expect(await teamOf(B, pat)).toEqual(['dora']);
    expect(queries()).toBe(before);
  });

  it('sees writes made through REST: an event created, then cancelled', async () => {
    const pat = ids[A]!.pat!;
    const before = await cachedTeam(A, pat);
    const token = await tokenFor(node, A, 'gus');
    const created = await node.http.post('/api/events/create', {
      tenant: A,
      token,
      body: { name: 'Follow-up', startAt: inHours(1), endAt: inHours(2), participants: [{ userId: pat }] },
    });
    expect(created.status).toBe(201);
    expect(await cachedTeam(A, pat)).toEqual([...before, 'gus'].sort());
    const cancelled = await node.http.post('/api/events/cancel', {
      tenant: A,
      token,
      body: { eventIds: [created.body.id] },
    });
    expect(cancelled.status).toBe(200);
    expect(await cachedTeam(A, pat)).toEqual(before);
  });

  it("keeps tenants apart: one tenant's entry or write never serves or retires another's", async () => {
    // The same user id in both tenants, with a different care team in each.
    const x = new Types.ObjectId();
    await newEvent(A, 'dora', [x]);
    await newEvent(B, 'gus', [x]);
    expect(await cachedTeam(A, String(x))).toEqual(['dora']);
    expect(await cachedTeam(B, String(x))).toEqual(['gus']);
    await newEvent(A, 'cara', [x]);
    const before = queries();
    expect(await teamOf(B, String(x))).toEqual(['gus']);
    expect(queries()).toBe(before);
    expect(await teamOf(A, String(x))).toEqual(['cara', 'dora']);
    expect(queries()).toBe(before + 2);
  });

  it('keeps no answer while a write is under way (a writer that lost Redis after its write), and caches again after it', async () => {
    const store = new CareTeamStore({ redis: node.infra.redis, keys: node.infra.keys, ttlSeconds: 60 });
    const pat = ids[A]!.pat!;
    const team = await cachedTeam(A, pat);
    const token = await store.begin(A);
    const before = queries();
    expect(await teamOf(A, pat)).toEqual(team);
    expect(await teamOf(A, pat)).toEqual(team);
    expect(queries()).toBe(before + 4);
    await store.end(A, token);
    expect(await cachedTeam(A, pat)).toEqual(team);
  });

  it('answers from the database when Redis is unavailable, lets a care-team write through, and retires the cached teams once Redis answers', async () => {
    const pat = ids[A]!.pat!;
    const dead = createRedis(`redis://127.0.0.1:${await freePort()}`, 'dead', {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    dead.on('error', () => undefined);
    try {
      const store = new CareTeamStore({ redis: dead, keys: node.infra.keys, ttlSeconds: 60 });
      const scope = new DirectoryScope({
        patientScope: async () => 'careTeam',
        events: events,
        groups: groups,
        careTeams: store,
      });
      const expected = await teamOf(A, pat);
      const before = queries();
      expect(await teamOf(A, pat, scope)).toEqual(expected);
      expect(await teamOf(A, pat, scope)).toEqual(expected);
      expect(queries()).toBe(before + 4);
      // Scheduling goes on while Redis is away (a write's changes are committed from MongoDB alone).
      const write = jest.fn(async () => 'written');
      await expect(careTeamWrite(store, A, write)).resolves.toBe('written');
      expect(write).toHaveBeenCalledTimes(1);
      expect(await store.settle()).toBe(false);
    } finally {
      dead.disconnect();
    }
    // A process whose marks could not be set while another kept a team cached: once Redis answers it
    // changes the generation, and the team cached before is not served again.
    ids[A]!.erin = await createUser(node, A, {
      username: 'erin',
      role: 'clinician',
      kind: 'person',
      displayName: 'erin',
    });
    const cached = await cachedTeam(A, pat);
    expect(cached).not.toContain('erin');
    const away = new CareTeamStore({ redis: node.infra.redis, keys: node.infra.keys, ttlSeconds: 60 });
    jest.spyOn(away, 'begin').mockRejectedValueOnce(new Error('Redis could not be reached'));
    await careTeamWrite(away, A, () => newEvent(A, 'erin', [oid(A, 'pat')]));
    expect(await away.settle()).toBe(true);
    expect(await teamOf(A, pat)).toEqual([...cached, 'erin'].sort());
  });
});
