import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { as, world, type World } from './fixtures.js';
import { UserRepository, matchesSearch, type UserRecord } from '../../../src/data/repositories/user.repository.js';

describe('contacts REST', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(async () => w.node.destroy());

  it('searches contacts by name with paging, merged with presence', async () => {
    await w.node.services.presence.connected(w.tenantA, w.a.bob.id, 'n1', 's1');
    const r = await as(w, w.a.alice).get('/api/contacts/get?name=bob&take=5');
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(1);
    expect(r.body.items[0]).toMatchObject({
      id: w.a.bob.id,
      displayName: 'Bob Okafor',
      online: true,
      favourite: false,
      initial: 'B',
    });
    const all = await as(w, w.a.alice).get('/api/contacts/get?skip=1&take=2');
    expect(all.body.items).toHaveLength(2);
    expect(all.body.total).toBe(5);
    expect(all.body.items.map((c: { id: string }) => c.id)).not.toContain(w.a.alice.id);
    await w.node.services.presence.disconnected(w.tenantA, w.a.bob.id, 'n1', 's1');
  });

  it('shares a search count between callers and leaves each caller out of their own total', async () => {
    const alice = await as(w, w.a.alice).get('/api/contacts/get?take=1');
    const bob = await as(w, w.a.bob).get('/api/contacts/get?take=1');
    expect([alice.body.total, bob.body.total]).toEqual([5, 5]);
    expect((await as(w, w.a.bob).get('/api/contacts/get?name=alice&take=1')).body.total).toBe(1);
    expect((await as(w, w.a.alice).get('/api/contacts/get?name=alice&take=1')).body.total).toBe(0);
  });

  it('decides in memory whether a user matches a search exactly as the database does', async () => {
    const db = w.node.infra.mongo.tenantDb(w.tenantA);
    const repo = new UserRepository(db);
    const users = await db.models.User.find().lean<UserRecord[]>().exec();
    for (const q of [
      {},
      { name: 'o' },
      { name: 'ALI' },
      { name: 'okafor' },
      { initial: 'B' },
      { name: 'a', initial: 'P' },
      { name: 'zz' },
    ]) {
      expect(users.filter((u) => matchesSearch(q, u)).length).toBe(await repo.count(q));
    }
  });

  it('caps take at the configured maximum and filters by alphabet', async () => {
    const r = await as(w, w.a.alice).get('/api/contacts/get?take=100000');
    expect(r.status).toBe(200);
    expect(r.body.take).toBe(w.node.config.limits.pageMaxTake);
    const p = await as(w, w.a.alice).get('/api/contacts/get?alphabet=p');
    expect(p.body.items.map((c: { username: string }) => c.username)).toEqual(['pat']);
  });

  it('rejects bad query values naming the field', async () => {
    const r = await as(w, w.a.alice).get('/api/contacts/get?take=0');
    expect(r.status).toBe(400);
    expect(r.body.errors[0].field).toBe('query.take');
    const a = await as(w, w.a.alice).get('/api/contacts/get?alphabet=ab');
    expect(a.body.errors[0].field).toBe('query.alphabet');
  });

  it('needs a token and the permission', async () => {
    expect((await w.node.http.get('/api/contacts/get', { tenant: w.tenantA })).status).toBe(401);
    const b = await w.node.http.get('/api/contacts/get', { tenant: w.tenantA, token: w.b.alice.token });
    expect(b.status).toBe(403);
  });

  it('returns frequent contacts from meeting history', async () => {
    const start = new Date(Date.now() + 3600_000).toISOString();
    const end = new Date(Date.now() + 7200_000).toISOString();
    const e = await as(w, w.a.alice).post('/api/events/create', {
      name: 'Review',
      startAt: start,
      endAt: end,
      participants: [{ userId: w.a.pat.id }],
    });
    expect(e.status).toBe(201);
    const r = await as(w, w.a.alice).get('/api/contacts/get?frequent=true');
    expect(r.status).toBe(200);
    expect(r.body.items.map((c: { id: string }) => c.id)).toEqual([w.a.pat.id]);
    // Two calls with Bob outrank one meeting with Pat.
    const { CallRecord } = w.node.infra.mongo.tenantDb(w.tenantA).models;
    for (const n of [1, 2]) {
      await CallRecord.create({
        _id: `call-${n}`,
        callerId: w.a.bob.id,
        participantIds: [w.a.alice.id],
        status: 'ended',
        startedAt: new Date(Date.now() - n * 60_000),
      });
    }
    const ranked = await as(w, w.a.alice).get('/api/contacts/get?frequent=1');
    expect(ranked.body.items.map((c: { id: string }) => c.id)).toEqual([w.a.bob.id, w.a.pat.id]);
    const named = await as(w, w.a.alice).get('/api/contacts/get?frequent=true&name=PAT');
    expect(named.body.items.map((c: { id: string }) => c.id)).toEqual([w.a.pat.id]);
  });

  it('returns the caller card (me)', async () => {
    const r = await as(w, w.a.alice).get('/api/contacts/me');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: w.a.alice.id, username: 'alice', role: 'clinician' });
  });

  it('marks and unmarks favourites; refuses unknown and foreign contacts', async () => {
    const set = await as(w, w.a.alice).post('/api/contacts/setFavourite', { contactId: w.a.bob.id, favourite: true });
    expect(set.body).toEqual({ contactId: w.a.bob.id, favourite: true });
    const list = await as(w, w.a.alice).get('/api/contacts/get?name=bob');
    expect(list.body.items[0].favourite).toBe(true);
    await as(w, w.a.alice).post('/api/contacts/setFavourite', { contactId: w.a.bob.id, favourite: false });
    expect((await as(w, w.a.alice).get('/api/contacts/get?name=bob')).body.items[0].favourite).toBe(false);
    const foreign = await as(w, w.a.alice).post('/api/contacts/setFavourite', { contactId: w.b.bob.id });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('contact_not_found');
    const bad = await as(w, w.a.alice).post('/api/contacts/setFavourite', { contactId: 'nope' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('contactId');
  });

  it('manages groups and lists their contacts', async () => {
    const c = await as(w, w.a.alice).post('/api/contacts/group/create', {
      name: 'Ward 3',
      participantIds: [w.a.bob.id],
    });
    expect(c.status).toBe(201);
    const groupId = c.body.id;
    const add = await as(w, w.a.alice).post('/api/contacts/group/add', { groupId, participantIds: [w.a.pat.id] });
    expect(add.body.participantIds.sort()).toEqual([w.a.bob.id, w.a.pat.id].sort());
    const ren = await as(w, w.a.alice).post('/api/contacts/group/rename', { groupId, name: 'Ward 4' });
    expect(ren.body.name).toBe('Ward 4');
    const rem = await as(w, w.a.alice).post('/api/contacts/group/remove', { groupId, participantIds: [w.a.bob.id] });
    expect(rem.body.participantIds).toEqual([w.a.pat.id]);
    const users = await as(w, w.a.alice).get(`/api/contacts/group/users/${groupId}`);
    expect(users.body.map((u: { id: string }) => u.id)).toEqual([w.a.pat.id]);
    // Members read, only the owner changes.
    expect((await as(w, w.a.pat).get(`/api/contacts/group/users/${groupId}`)).status).toBe(200);
    expect((await as(w, w.a.bob).get(`/api/contacts/group/users/${groupId}`)).status).toBe(404);
    expect((await as(w, w.a.dev).post('/api/contacts/group/create', { name: 'x' })).status).toBe(403);
    expect((await as(w, w.a.bob).post('/api/contacts/group/rename', { groupId, name: 'x' })).body.code).toBe(
      'group_not_found',
    );
    const unknown = await as(w, w.a.alice).post('/api/contacts/group/create', {
      name: 'x',
      participantIds: [w.b.bob.id],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].field).toBe('participantIds.0');
    const missing = await as(w, w.a.alice).get(`/api/contacts/group/users/${new Types.ObjectId().toHexString()}`);
    expect(missing.status).toBe(404);
    expect((await as(w, w.a.alice).post('/api/contacts/group/create', { name: '' })).body.errors[0].field).toBe('name');
  });
});
