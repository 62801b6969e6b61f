import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { CONTRACT_SIDES, type ContractSide } from '../../support/fakes/contract.js';

/**
 * The contract of the directory's smaller repositories (groups, favourites, call history, devices) on
 * the in-memory fakes and the real repositories.
 */
describe.each(CONTRACT_SIDES)('groups, favourites, calls and devices on %s', (_name, open) => {
  let side: ContractSide;
  const T = 'directory';
  const r = () => side.repos(T);
  const owner = new Types.ObjectId();
  const member = new Types.ObjectId();
  const other = new Types.ObjectId();

  beforeAll(async () => {
    side = await open();
    await side.provision(T);
  });
  afterAll(async () => side.close());

  it('groups: visible to owner and members, changed by the owner only, members a set', async () => {
    const g = await r().groups.create(owner, '  Ward 3 ', [member]);
    expect(g).toMatchObject({ name: 'Ward 3', ownerId: owner, participantIds: [member] });
    expect(await r().groups.findVisible(g._id, member)).not.toBeNull();
    expect(await r().groups.findVisible(g._id, other)).toBeNull();
    expect(await r().groups.rename(g._id, member, 'Mine now')).toBeNull();
    expect((await r().groups.rename(g._id, owner, 'Ward 4'))?.name).toBe('Ward 4');
    expect((await r().groups.addParticipants(g._id, owner, [member, other]))?.participantIds).toEqual([member, other]);
    expect((await r().groups.removeParticipants(g._id, owner, [member]))?.participantIds).toEqual([other]);
    expect(await r().groups.addParticipants(g._id, other, [member])).toBeNull();
    await r().groups.create(other, 'Alpha', [owner]);
    expect((await r().groups.listVisible(owner)).map((x) => x.name)).toEqual(['Alpha', 'Ward 4']);
    expect((await r().groups.findVisibleMany([g._id], member)).length).toBe(0);
    expect((await r().groups.careTeamOf(other, 10)).map(String)).toEqual([owner, other].map(String));
  });

  it('favourites: one mark per contact, unmarked again, read in one query', async () => {
    await r().favourites.set(owner, member, true);
    await r().favourites.set(owner, member, true);
    await r().favourites.set(owner, other, true);
    expect((await r().favourites.contactIds(owner)).map(String).sort()).toEqual([member, other].map(String).sort());
    await r().favourites.set(owner, other, false);
    await r().favourites.set(owner, other, false);
    expect([...(await r().favourites.among(owner, [member, other]))]).toEqual([String(member)]);
    expect(await r().favourites.among(owner, [])).toEqual(new Set());
  });

  it('call history: saved under the actor epoch (a stale epoch is fenced), counterparts newest first', async () => {
    const call = {
      callId: `call-${owner}`,
      callerId: String(owner),
      participantIds: [String(member)],
      status: 'ringing' as const,
      startedAt: new Date('2026-11-01T10:00:00Z'),
    };
    expect(await r().calls.save(call, 2)).toBe(true);
    expect(await r().calls.save({ ...call, status: 'ended' }, 1)).toBe(false);
    expect(await r().calls.statusOf(call.callId)).toBe('ringing');
    expect(await r().calls.save({ ...call, status: 'active' }, 2)).toBe(true);
    expect(await r().calls.statusOf(call.callId)).toBe('active');
    await r().calls.save(
      {
        ...call,
        callId: `later-${owner}`,
        participantIds: [String(other)],
        startedAt: new Date('2026-11-02T10:00:00Z'),
      },
      1,
    );
    expect((await r().calls.recentCounterparts(owner, 10)).map((c) => String(c.id))).toEqual([
      String(other),
      String(member),
    ]);
    expect((await r().calls.recentCounterparts(member, 10)).map((c) => String(c.id))).toEqual([String(owner)]);
    expect(await r().calls.isMember(call.callId, member)).toBe(true);
    expect(await r().calls.isMember(call.callId, other)).toBe(false);
    expect(await r().calls.exists('no-such-call')).toBe(false);
  });

  it('devices: a device is available to its owner and to anyone when it has none, not to another user', async () => {
    const mine = new Types.ObjectId();
    const free = new Types.ObjectId();
    const base = { typeId: new Types.ObjectId(), physicalIds: ['p'], name: 'Headset' };
    await side
      .raw(T)
      .insertDevice({ _id: mine, ...base, fingerprint: `f-${mine}`, deviceKeyHash: `k-${mine}`, ownerUserId: owner });
    await side.raw(T).insertDevice({ _id: free, ...base, fingerprint: `f-${free}`, deviceKeyHash: `k-${free}` });
    expect((await r().devices.findAvailable(mine, owner))?.name).toBe('Headset');
    expect(await r().devices.findAvailable(mine, other)).toBeNull();
    expect((await r().devices.findAvailable(free, other))?.status).toBe('offline');
  });
});
