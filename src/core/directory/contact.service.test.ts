import { beforeEach, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import type { Principal } from '../../kernel/principal.js';
import type { UserRecord } from '../../data/repositories/user.repository.js';
import {
  fakeDirectoryServices,
  type FakeDirectoryServices,
} from '../../../test/support/fakes/directory.fake-services.js';
import { principalOf } from '../../../test/support/fakes/principals.js';

/**
 * Who may see whom in the directory (decision 230) on in-memory fakes: staff see the tenant; a patient
 * sees their care team only, never another patient outside it, whichever way the directory is read.
 */
const T = 'clinic';
let s: FakeDirectoryServices;
let people: Record<'doctor' | 'nurse' | 'outsider' | 'alice' | 'bob' | 'carol' | 'headset', UserRecord>;

async function user(username: string, displayName: string, role: string, kind?: 'device'): Promise<UserRecord> {
  const id = await s.repos.credentials(T).create({ username, displayName, role, ...(kind ? { kind } : {}) });
  return (await s.repos.users(T).findById(new Types.ObjectId(id)))!;
}

const as = (u: UserRecord) => principalOf(T, u);
const names = (views: { user: UserRecord }[]) => views.map((v) => v.user.username).sort();
const all = { skip: 0, take: 100 };

beforeEach(async () => {
  s = fakeDirectoryServices();
  s.mongo.provision(T);
  people = {
    doctor: await user('doctor', 'Dr Dana Doctor', 'clinician'),
    nurse: await user('nurse', 'Nina Nurse', 'clinician'),
    outsider: await user('outsider', 'Otto Outsider', 'clinician'),
    alice: await user('alice', 'Alice Patient', 'patient'),
    bob: await user('bob', 'Bob Patient', 'patient'),
    carol: await user('carol', 'Carol Patient', 'patient'),
    headset: await user('headset', 'Ward Headset', 'device', 'device'),
  };
  // Alice's care team: the doctor's consultation (with its headset), and the nurse's group.
  const e = await s.repos.events(T).create({
    name: 'Follow-up',
    startAt: new Date('2026-11-20T10:00:00Z'),
    endAt: new Date('2026-11-20T10:30:00Z'),
    organizerId: people.doctor._id,
    participants: [{ userId: people.alice._id, role: 'participant' }],
    attachments: [],
    meetingCode: 'CARE01',
  });
  await s.repos.events(T).addDevice(e._id, people.headset._id);
  await s.repos.groups(T).create(people.nurse._id, 'Ward 3', [people.alice._id]);
  // Bob's consultation with the outsider; Carol's cancelled one with the nurse does not count.
  await s.repos.events(T).create({
    name: 'Bob intake',
    startAt: new Date('2026-11-21T10:00:00Z'),
    endAt: new Date('2026-11-21T10:30:00Z'),
    organizerId: people.outsider._id,
    participants: [{ userId: people.bob._id, role: 'participant' }],
    attachments: [],
    meetingCode: 'BOB001',
  });
  const cancelled = await s.repos.events(T).create({
    name: 'Carol intake',
    startAt: new Date('2026-11-22T10:00:00Z'),
    endAt: new Date('2026-11-22T10:30:00Z'),
    organizerId: people.nurse._id,
    participants: [{ userId: people.carol._id, role: 'participant' }],
    attachments: [],
    meetingCode: 'CAR001',
  });
  await s.repos.events(T).transition(cancelled._id, ['scheduled'], 'cancelled');
});

describe('staff see the whole tenant', () => {
  it('a clinician finds every active user but themselves', async () => {
    const page = await s.contacts.search(as(people.doctor), { ...all });
    expect(names(page.items)).toEqual(['alice', 'bob', 'carol', 'headset', 'nurse', 'outsider']);
    expect(page.total).toBe(6);
  });

  it('a disabled user is in nobody’s directory', async () => {
    const users = s.mongo.tenantDb(T).collection('User');
    users.update(users.byId(people.bob._id)!, (d) => void (d.status = 'disabled'));
    expect(names((await s.contacts.search(as(people.doctor), { ...all })).items)).not.toContain('bob');
  });
});

describe('a patient sees their care team only (careTeam scope, the default)', () => {
  it('search: the organizer, the group owner and the headset of their events; no other patient', async () => {
    const page = await s.contacts.search(as(people.alice), { ...all });
    expect(names(page.items)).toEqual(['doctor', 'headset', 'nurse']);
    expect(page.total).toBe(3);
  });

  it('a name search for another patient finds nothing, and counts nothing', async () => {
    const page = await s.contacts.search(as(people.alice), { ...all, name: 'bob' });
    expect(page.items).toEqual([]);
    expect(page.total).toBe(0);
  });

  it('the alphabet counts only the care team', async () => {
    expect(await s.contacts.alphabets(as(people.alice))).toEqual([
      { initial: 'D', count: 1 },
      { initial: 'N', count: 1 },
      { initial: 'W', count: 1 },
    ]);
  });

  it('favourites first: a favourite outside the care team is not listed', async () => {
    await s.repos.favourites(T).set(people.alice._id, people.bob._id, true);
    await s.repos.favourites(T).set(people.alice._id, people.nurse._id, true);
    const page = await s.contacts.myContacts(as(people.alice), {
      sortType: 'FAVOURITES_FIRST',
      isCallList: false,
      paging: all,
    } as never);
    expect(page.items.map((v) => [v.user.username, v.favourite])).toEqual([
      ['nurse', true],
      ['doctor', false],
      ['headset', false],
    ]);
  });

  it('the call list leaves out a counterpart outside the care team', async () => {
    await s.repos.calls(T).save(
      {
        callId: 'call-1',
        callerId: String(people.bob._id),
        participantIds: [String(people.alice._id)],
        status: 'ended',
        startedAt: new Date('2026-11-23T09:00:00Z'),
      },
      1,
    );
    await s.repos.calls(T).save(
      {
        callId: 'call-2',
        callerId: String(people.doctor._id),
        participantIds: [String(people.alice._id)],
        status: 'ended',
        startedAt: new Date('2026-11-23T10:00:00Z'),
      },
      1,
    );
    const page = await s.contacts.search(as(people.alice), { ...all, frequent: true });
    expect(names(page.items)).toEqual(['doctor']);
  });

  it('a cancelled consultation makes no care team: Carol sees nobody', async () => {
    expect((await s.contacts.search(as(people.carol), { ...all })).items).toEqual([]);
  });

  it('another tenant’s users are never in the directory, whatever the ids', async () => {
    s.mongo.provision('other');
    await s.repos.credentials('other').create({ username: 'eve', displayName: 'Eve Else', role: 'clinician' });
    const visitor: Principal = { ...as(people.doctor), tenant: 'other' };
    expect(names((await s.contacts.search(visitor, { ...all })).items)).toEqual(['eve']);
    expect(names((await s.contacts.search(as(people.doctor), { ...all })).items)).not.toContain('eve');
  });
});

describe('the tenant may open the directory to patients (patientScope: tenant)', () => {
  it('then a patient sees every user', async () => {
    await s.repos.settings(T).setPaths({ 'directory.patientScope': 'tenant' });
    const page = await s.contacts.search(as(people.alice), { ...all });
    expect(names(page.items)).toEqual(['bob', 'carol', 'doctor', 'headset', 'nurse', 'outsider']);
  });

  it('the scope is decided per caller role: staff are never narrowed', async () => {
    expect(await s.directoryScope.visibleTo(as(people.nurse))).toBeUndefined();
    const ids = (await s.directoryScope.visibleTo(as(people.alice)))!.map(String).sort();
    expect(ids).toEqual([people.doctor._id, people.headset._id, people.nurse._id].map(String).sort());
  });
});
