import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { isDuplicateKey, toAppError } from '../../../src/kernel/errors.js';
import { defaultSettings } from '../../../src/data/tenant-defaults.js';
import { CONTRACT_SIDES, type ContractSide } from '../../support/fakes/contract.js';

/**
 * The users and credentials contract (src/data/repositories/user.repository.ts, credential.repository.ts):
 * the same cases on the in-memory fake and on the real repositories (test/support/fakes/contract.ts).
 */
describe.each(CONTRACT_SIDES)('users and credentials on %s', (_name, open) => {
  let side: ContractSide;
  const T = 'users';
  const r = () => side.repos(T);
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    side = await open();
    await side.provision(T);
    for (const [username, displayName, role] of [
      ['zoe', 'Dr Zoë O’Neil-Smith', 'clinician'],
      ['adam', 'Adam Ant', 'patient'],
      ['anna', 'Anna Avery', 'patient'],
      ['bert', 'Bert Brown', 'clinician'],
      ['gone', 'Gone Away', 'patient'],
      ['7even', '7even Seas', 'device'],
    ] as const)
      ids[username] = await r().credentials.create({ username, displayName, role });
    await side.raw(T).setUser(ids.gone!, { status: 'disabled' });
  });
  afterAll(async () => side.close());

  const oid = (name: string) => new Types.ObjectId(ids[name]);
  const usernames = (rows: { username: string }[]) => rows.map((u) => u.username);

  it('refuses a second user with the same username (any case) as a coded conflict', async () => {
    const err = await r()
      .credentials.create({ username: 'ADAM ', displayName: 'Adam Again', role: 'patient' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isDuplicateKey(err)).toBe(true);
    expect(toAppError(err).code).toBe('conflict');
  });

  it('reads an account with exactly the credential fields, by id, username (any case) and subject', async () => {
    const acc = await r().credentials.findById(ids.adam!);
    // The credential fields, and the sort keys the user schema's read defaults derive from the display name.
    expect(Object.keys(acc!).sort()).toEqual(
      [
        '_id',
        'displayName',
        'idpSubject',
        'kind',
        'pinHistory',
        'role',
        'status',
        'username',
        'sortName',
        'initial',
        'nameTokens',
      ].sort(),
    );
    expect(acc).toMatchObject({ username: 'adam', kind: 'person', role: 'patient', status: 'active', pinHistory: [] });
    expect(String((await r().credentials.findByUsername(' Adam'))?._id)).toBe(ids.adam);
    expect(String((await r().credentials.findBySubject('adam'))?._id)).toBe(ids.adam);
    expect(await r().credentials.findById('not-an-id')).toBeNull();
    expect(await r().credentials.findById(new Types.ObjectId().toHexString())).toBeNull();
  });

  it('reads a user with the schema defaults and the sort keys of the name', async () => {
    const u = await r().users.findById(oid('zoe'));
    expect(u).toMatchObject({
      username: 'zoe',
      sortName: 'zoe o’neil-smith',
      initial: 'Z',
      kind: 'person',
      status: 'active',
      pinHistory: [],
    });
    expect(u?.nameTokens).toEqual(expect.arrayContaining(['dr', 'zoe', 'oneilsmith', 'smith']));
    expect(u?.createdAt).toBeInstanceOf(Date);
    expect(await r().users.findById(new Types.ObjectId())).toBeNull();
  });

  it('searches active users by name prefix and initial, ordered by sort name, paged', async () => {
    expect(usernames(await r().users.search({ skip: 0, take: 10 }))).toEqual(['7even', 'adam', 'anna', 'bert', 'zoe']);
    expect(usernames(await r().users.search({ name: 'an', skip: 0, take: 10 }))).toEqual(['adam', 'anna']);
    expect(usernames(await r().users.search({ name: 'smi', skip: 0, take: 10 }))).toEqual(['zoe']);
    expect(usernames(await r().users.search({ initial: 'A', skip: 1, take: 1 }))).toEqual(['anna']);
    expect(usernames(await r().users.search({ initial: '#', skip: 0, take: 5 }))).toEqual(['7even']);
    expect(usernames(await r().users.search({ name: 'gone', skip: 0, take: 5 }))).toEqual([]);
  });

  it('narrows a search by ids, left-out ids and the caller', async () => {
    const q = {
      ids: [oid('adam'), oid('anna'), oid('bert'), oid('gone')],
      notIds: [oid('bert')],
      excludeId: oid('anna'),
    };
    expect(usernames(await r().users.search({ ...q, skip: 0, take: 10 }))).toEqual(['adam']);
    expect(await r().users.count(q)).toBe(1);
    expect(await r().users.count({})).toBe(5);
    expect(await r().users.count({}, 3)).toBe(3);
    expect([...(await r().users.existingActiveIds([oid('adam'), oid('gone')]))]).toEqual([ids.adam]);
    expect(usernames(await r().users.findByIds([oid('gone'), oid('bert')])).sort()).toEqual(['bert', 'gone']);
  });

  it('counts the alphabet buckets of active users, optionally without one and within some', async () => {
    expect(await r().users.initials()).toEqual([
      { initial: '#', count: 1 },
      { initial: 'A', count: 2 },
      { initial: 'B', count: 1 },
      { initial: 'Z', count: 1 },
    ]);
    expect(await r().users.initials(oid('adam'), [oid('adam'), oid('anna'), oid('zoe')])).toEqual([
      { initial: 'A', count: 1 },
      { initial: 'Z', count: 1 },
    ]);
  });

  it('a new display name brings its sort key, bucket and tokens; an unknown id changes nothing', async () => {
    const after = await r().users.updateProfile(oid('bert'), { displayName: 'Carl Cole', title: 'RN' });
    expect(after).toMatchObject({ displayName: 'Carl Cole', sortName: 'carl cole', initial: 'C', title: 'RN' });
    expect(usernames(await r().users.search({ name: 'carl', skip: 0, take: 5 }))).toEqual(['bert']);
    expect(usernames(await r().users.search({ name: 'bert', skip: 0, take: 5 }))).toEqual(['bert']);
    expect(await r().users.updateProfile(new Types.ObjectId(), { title: 'x' })).toBeNull();
  });

  it('moves last seen forward only', async () => {
    const later = new Date('2026-11-27T12:00:00Z');
    await r().users.touchLastSeenMany([{ userId: oid('anna'), at: later }]);
    await r().users.touchLastSeenMany([{ userId: oid('anna'), at: new Date('2026-11-27T11:00:00Z') }]);
    expect((await r().users.findById(oid('anna')))?.lastSeenAt).toEqual(later);
  });

  it('sets and clears a PIN with its history; a role; binds a subject once', async () => {
    await r().credentials.setPin(ids.anna!, 'hash-1', ['hash-0']);
    expect(await r().credentials.findById(ids.anna!)).toMatchObject({ pinHash: 'hash-1', pinHistory: ['hash-0'] });
    await r().credentials.setPin(ids.anna!, null, ['hash-0']);
    const cleared = await r().credentials.findById(ids.anna!);
    expect(cleared).not.toHaveProperty('pinHash');
    expect(cleared?.pinHistory).toEqual(['hash-0']);
    expect(await r().credentials.setRole(ids.anna!, 'clinician')).toBe(true);
    expect(await r().credentials.setRole(new Types.ObjectId().toHexString(), 'clinician')).toBe(false);
    expect(await r().credentials.bindSubject(ids.anna!, 'wrong', 'sub-1')).toBe(false);
    expect(await r().credentials.bindSubject(ids.anna!, 'anna', 'sub-1')).toBe(true);
    expect(await r().credentials.bindSubject(ids.anna!, 'anna', 'sub-2')).toBe(false);
    expect(await r().credentials.activeIdsWithRoles(['clinician'], 10)).toEqual(
      expect.arrayContaining([ids.anna, ids.zoe, ids.bert]),
    );
    expect(await r().credentials.activeIdsWithRoles(['patient'], 10)).toEqual([ids.adam]);
  });

  it("reads the tenant's security rules; a tenant without its settings has none", async () => {
    expect(await r().credentials.securityRules()).toEqual(defaultSettings(T).security);
    expect(await side.repos('unprovisioned').credentials.securityRules()).toBeNull();
  });

  it('keeps tenants apart', async () => {
    expect(await side.repos('elsewhere').users.findById(oid('adam'))).toBeNull();
    expect(await side.repos('elsewhere').credentials.findByUsername('adam')).toBeNull();
  });
});
