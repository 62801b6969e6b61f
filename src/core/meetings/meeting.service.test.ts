import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Types } from 'mongoose';
import type { EventRecord } from '../../data/repositories/event.repository.js';
import type { UserRecord } from '../../data/repositories/user.repository.js';
import {
  fakeDirectoryServices,
  type FakeDirectoryServices,
} from '../../../test/support/fakes/directory.fake-services.js';
import { principalOf } from '../../../test/support/fakes/principals.js';
import { FakeEventRepository } from '../../../test/support/fakes/events.fake.js';
import { FakeUserRepository } from '../../../test/support/fakes/users.fake.js';
import { FakeTenantConfigRepository } from '../../../test/support/fakes/settings.fake.js';

/**
 * Who may start, join and end a meeting, and the waiting room decision (decision 870), at the service
 * level on in-memory fakes (the meeting actor applies the admission this service computes).
 */
const T = 'clinic';
let s: FakeDirectoryServices;
let u: Record<'host' | 'cohost' | 'patient' | 'stranger' | 'headset', UserRecord>;
let event: EventRecord;

async function user(username: string, role: string, kind?: 'device'): Promise<UserRecord> {
  const id = await s.repos.credentials(T).create({ username, displayName: username, role, ...(kind ? { kind } : {}) });
  return (await s.repos.users(T).findById(new Types.ObjectId(id)))!;
}

const as = (x: UserRecord) => principalOf(T, x);
const id = () => String(event._id);
const actions = async () => (await s.audit.list(T, {})).map((e) => e.action).reverse();

beforeEach(async () => {
  s = fakeDirectoryServices();
  s.mongo.provision(T);
  u = {
    host: await user('host', 'clinician'),
    cohost: await user('cohost', 'clinician'),
    patient: await user('patient', 'patient'),
    stranger: await user('stranger', 'patient'),
    headset: await user('headset', 'device', 'device'),
  };
  event = await s.repos.events(T).create({
    name: 'Consultation',
    startAt: new Date(Date.now() + 60_000),
    endAt: new Date(Date.now() + 1_860_000),
    organizerId: u.host._id,
    participants: [
      { userId: u.cohost._id, role: 'host' },
      { userId: u.patient._id, role: 'participant' },
    ],
    attachments: [],
    meetingCode: 'ROOM42',
  });
});

describe('starting a meeting', () => {
  it('only a host starts it: a participant is refused, a stranger does not see the event', async () => {
    await expect(s.meetings.initEvent(as(u.patient), id())).rejects.toMatchObject({ code: 'forbidden' });
    await expect(s.meetings.initEvent(as(u.stranger), id())).rejects.toMatchObject({ code: 'event_not_found' });
    expect((await s.repos.events(T).findById(event._id))?.status).toBe('scheduled');
  });

  it('the organizer starts it: room assigned, started, the start and the join audited once', async () => {
    const data = await s.meetings.initEvent(as(u.host), id());
    expect(data).toMatchObject({ eventId: id(), role: 'host', status: 'started', meetingCode: 'ROOM42' });
    const stored = await s.repos.events(T).findById(event._id);
    expect(stored?.room?.roomName).toBe(data.join.roomName);
    await s.vcs.verifyJoinToken(data.join.token, data.join.roomName);
    // A co-host starting it again joins the same room; the start is not recorded twice.
    const again = await s.meetings.initEvent(as(u.cohost), id());
    expect(again.join.roomName).toBe(data.join.roomName);
    expect(await actions()).toEqual(['meeting.start', 'meeting.join', 'meeting.join']);
  });

  it('another tenant cannot reach the event by its id', async () => {
    s.mongo.provision('other');
    await expect(s.meetings.initEvent({ ...as(u.host), tenant: 'other' }, id())).rejects.toMatchObject({
      code: 'event_not_found',
    });
  });
});

describe('joining', () => {
  it('a participant joins a started meeting as a participant; before the start it is invalid_state', async () => {
    await expect(s.meetings.joinDetails(as(u.patient), id())).rejects.toMatchObject({ code: 'invalid_state' });
    await s.meetings.initEvent(as(u.host), id());
    const data = await s.meetings.joinDetails(as(u.patient), id());
    expect(data.role).toBe('participant');
    await expect(s.meetings.joinDetails(as(u.stranger), id())).rejects.toMatchObject({ code: 'event_not_found' });
  });

  it('by code, a stranger joins as a guest, and the join starts the meeting', async () => {
    const r = await s.meetings.joinByCode(T, 'room42', { kind: 'principal', principal: as(u.stranger) });
    expect(r.participant).toMatchObject({ identity: String(u.stranger._id), role: 'guest' });
    expect((await s.repos.events(T).findById(event._id))?.status).toBe('started');
  });

  it('by code, a headset joins as a device, a member in their own role', async () => {
    const d = await s.meetings.joinByCode(T, 'ROOM42', { kind: 'principal', principal: as(u.headset) });
    expect(d.participant).toMatchObject({ identity: `device:${u.headset._id}`, role: 'device' });
    const m = await s.meetings.joinByCode(T, 'ROOM42', { kind: 'principal', principal: as(u.cohost) });
    expect(m.participant.role).toBe('host');
  });

  it('guests by code are refused when the tenant turned guest join off; members still join', async () => {
    await s.repos.settings(T).setPaths({ 'features.guestJoin': false });
    await expect(s.meetings.joinByCode(T, 'ROOM42', { kind: 'guest', displayName: 'Visitor' })).rejects.toMatchObject({
      code: 'forbidden',
    });
    // A signed-in stranger by code is a guest too: the admission the meeting actor asks first refuses them.
    await expect(s.meetings.admission(as(u.stranger), id(), 'ROOM42')).rejects.toMatchObject({ code: 'forbidden' });
    expect(await s.meetings.admission(as(u.patient), id(), 'ROOM42')).toMatchObject({ role: 'participant' });
    expect(await s.meetings.admission(as(u.headset), id(), 'ROOM42')).toMatchObject({ role: 'device' });
    expect((await s.meetings.joinByCode(T, 'ROOM42', { kind: 'principal', principal: as(u.patient) })).role).toBe(
      'participant',
    );
  });

  it('an unknown code is meeting_not_found; an ended meeting cannot be joined', async () => {
    await expect(s.meetings.joinByCode(T, 'NOPE00', { kind: 'guest', displayName: 'V' })).rejects.toMatchObject({
      code: 'meeting_not_found',
    });
    await s.meetings.initEvent(as(u.host), id());
    await s.meetings.endEvent(T, id());
    await expect(s.meetings.joinByCode(T, 'ROOM42', { kind: 'guest', displayName: 'V' })).rejects.toMatchObject({
      code: 'invalid_state',
    });
  });
});

describe('one join, one read of the event and of the settings (decision 1135)', () => {
  /** Reads of the event and of the tenant's settings from here on, counted at the fake repositories. */
  function reads() {
    const spies = [
      ...(['findVisible', 'findById', 'findByMeetingCode'] as const).map((m) =>
        jest.spyOn(FakeEventRepository.prototype, m),
      ),
    ];
    const settings = jest.spyOn(FakeTenantConfigRepository.prototype, 'settings');
    return {
      get event() {
        return spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
      },
      get settings() {
        return settings.mock.calls.length;
      },
    };
  }
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('a join by event id after its admission reads the event once; the settings come from the cache', async () => {
    await s.meetings.initEvent(as(u.host), id());
    await s.meetings.admission(as(u.cohost), id());
    const n = reads();
    const a = await s.meetings.admission(as(u.patient), id());
    const data = await s.meetings.joinDetails(as(u.patient), id(), a.event);
    expect(data).toMatchObject({ eventId: id(), role: 'participant', status: 'started' });
    expect([n.event, n.settings]).toEqual([1, 0]);
    // Without what the admission saw, the join reads the event itself.
    await s.meetings.joinDetails(as(u.patient), id());
    expect([n.event, n.settings]).toEqual([2, 0]);
  });

  it('a member the meeting holds joins again without a read of the event; who is not held, or may not see it, reads (decision 1160)', async () => {
    await s.meetings.initEvent(as(u.host), id());
    await s.meetings.joinDetails(as(u.patient), id());
    const n = reads();
    const again = await s.meetings.joinDetails(as(u.patient), id(), undefined, true);
    expect(again).toMatchObject({ eventId: id(), role: 'participant', status: 'started', meetingCode: 'ROOM42' });
    await s.vcs.verifyJoinToken(again.join.token, again.join.roomName);
    expect(n.event).toBe(0);
    // Not held: read, as every first join.
    await s.meetings.joinDetails(as(u.patient), id());
    expect(n.event).toBe(1);
    // Held, but the kept event does not show them (a stranger): read, and refused as before.
    await expect(s.meetings.joinDetails(as(u.stranger), id(), undefined, true)).rejects.toMatchObject({
      code: 'event_not_found',
    });
    expect(n.event).toBe(2);
    // Another tenant's event of the same id is never the kept one.
    s.mongo.provision('other');
    await expect(
      s.meetings.joinDetails({ ...as(u.patient), tenant: 'other' }, id(), undefined, true),
    ).rejects.toMatchObject({ code: 'event_not_found' });
    // Ended here: forgotten, so even a held member's join reads the event and is refused.
    await s.meetings.endEvent(T, id());
    await expect(s.meetings.joinDetails(as(u.patient), id(), undefined, true)).rejects.toMatchObject({
      code: 'invalid_state',
    });
    expect((await actions()).filter((a) => a === 'meeting.join')).toHaveLength(4);
  });

  it('a join by code after its admission reads the event once', async () => {
    await s.meetings.initEvent(as(u.host), id());
    const n = reads();
    const a = await s.meetings.admission(as(u.stranger), id(), 'room42');
    const r = await s.meetings.joinByCode(T, 'room42', { kind: 'principal', principal: as(u.stranger) }, a.event);
    expect(r.participant).toMatchObject({ role: 'guest' });
    expect(n.event).toBe(1);
  });

  it('a join names its participant from the token (display name, kind) without reading the user; an older token reads it', async () => {
    await s.meetings.initEvent(as(u.host), id());
    const users = jest.spyOn(FakeUserRepository.prototype, 'findById');
    const named = (p: Awaited<ReturnType<typeof s.meetings.joinDetails>>) =>
      s.vcs.verifyJoinToken(p.join.token, p.join.roomName);
    // The token states the name it was issued with: a rename since shows at the next token.
    const fromToken = await s.meetings.joinDetails(
      principalOf(T, u.patient, { displayName: 'Pat Old', kind: 'person' }),
      id(),
    );
    expect(await named(fromToken)).toMatchObject({
      identity: String(u.patient._id),
      name: 'Pat Old',
      role: 'participant',
    });
    expect(users).not.toHaveBeenCalled();
    // A headset's token says it is one: its device identity, again without a read.
    const headset = await s.meetings.joinByCode(T, 'ROOM42', {
      kind: 'principal',
      principal: principalOf(T, u.headset, { displayName: 'Ward headset', kind: 'device' }),
    });
    expect(headset.participant).toEqual({ identity: `device:${u.headset._id}`, name: 'Ward headset', role: 'device' });
    expect(users).not.toHaveBeenCalled();
    // A token that does not carry them (issued before they were): the user is read, as before.
    const read = await s.meetings.joinDetails(as(u.patient), id());
    expect(await named(read)).toMatchObject({ name: 'patient' });
    expect(users).toHaveBeenCalledTimes(1);
  });

  it('what another caller was admitted on is not taken for another event', async () => {
    await s.meetings.initEvent(as(u.host), id());
    const other = await s.repos.events(T).create({
      name: 'Other',
      startAt: new Date(Date.now() + 60_000),
      endAt: new Date(Date.now() + 1_860_000),
      organizerId: u.host._id,
      participants: [],
      attachments: [],
      meetingCode: 'OTHER1',
    });
    const a = await s.meetings.admission(as(u.patient), id());
    // The patient is no participant of the other event: the record seen for this one does not let them in.
    await expect(s.meetings.joinDetails(as(u.patient), String(other._id), a.event)).rejects.toMatchObject({
      code: 'event_not_found',
    });
    await expect(
      s.meetings.joinByCode(T, 'OTHER1', { kind: 'principal', principal: as(u.patient) }, a.event),
    ).resolves.toMatchObject({ eventId: String(other._id) });
  });

  it('meeting settings and features: one read per tenant for concurrent joins, a change here applies at once', async () => {
    const n = reads();
    const all = await Promise.all([
      ...Array.from({ length: 5 }, () => s.admin.meetingSettings(T)),
      ...Array.from({ length: 5 }, () => s.admin.features(T)),
    ]);
    expect(all[0]).toMatchObject({ waitingRoom: false });
    expect(n.settings).toBe(1);
    // A change through the settings service drops this node's cache: the next join sees it.
    await s.tenantSettings.configure(
      as(u.host),
      { name: T, displayName: T, status: 'active' },
      { meetings: { waitingRoom: true } },
    );
    const before = n.settings;
    expect(await s.admin.meetingSettings(T)).toMatchObject({ waitingRoom: true });
    expect((await s.meetings.admission(as(u.patient), id())).waitingRoom).toBe(true);
    expect(n.settings - before).toBe(1);
    // Written behind its back (another node's change), the cache answers what it read until it expires...
    await s.repos.settings(T).setPaths({ 'meetings.waitingRoom': false });
    expect(await s.admin.meetingSettings(T)).toMatchObject({ waitingRoom: true });
    // ...but the recording consent policy is read fresh every time, on every node.
    await s.repos.settings(T).setPaths({ 'meetings.recordingConsent': 'all' });
    expect(await s.recordingConsent.settings(T)).toMatchObject({ policy: 'all' });
    s.admin.forget(T);
    expect(await s.admin.meetingSettings(T)).toMatchObject({ waitingRoom: false, recordingConsent: 'all' });
  });

  it('a failed read of the settings is not kept: the next join reads again', async () => {
    jest.spyOn(FakeTenantConfigRepository.prototype, 'settings').mockRejectedValueOnce(new Error('server gone'));
    await expect(s.admin.meetingSettings(T)).rejects.toThrow('server gone');
    expect(await s.admin.meetingSettings(T)).toMatchObject({ waitingRoom: false });
  });
});

describe('the waiting room decision (admission)', () => {
  it('off by default: a participant is invited, a stranger by code is an uninvited guest', async () => {
    expect(await s.meetings.admission(as(u.patient), id())).toEqual({
      eventId: id(),
      role: 'participant',
      invited: true,
      waitingRoom: false,
      autoAdmitInvited: true,
      expirySeconds: 900,
      event: expect.objectContaining({ _id: event._id }),
    });
    expect(await s.meetings.admission(as(u.stranger), id(), 'ROOM42')).toMatchObject({
      role: 'guest',
      invited: false,
    });
  });

  it("the tenant's setting applies unless the event overrides it", async () => {
    await s.repos.settings(T).setPaths({
      'meetings.waitingRoom': true,
      'meetings.waitingRoomAutoAdmitInvited': false,
      'meetings.waitingRoomExpirySeconds': 300,
    });
    expect(await s.meetings.admission(as(u.patient), id())).toMatchObject({
      waitingRoom: true,
      autoAdmitInvited: false,
      expirySeconds: 300,
    });
    await s.repos.events(T).update(event._id, u.host._id, { waitingRoom: false });
    expect((await s.meetings.admission(as(u.patient), id())).waitingRoom).toBe(false);
  });

  it('by id only for members; a code must be the code of that event; a cancelled event admits no one', async () => {
    await expect(s.meetings.admission(as(u.stranger), id())).rejects.toMatchObject({ code: 'event_not_found' });
    const other = await s.repos.events(T).create({
      name: 'Other',
      startAt: new Date(),
      endAt: new Date(Date.now() + 60_000),
      organizerId: u.host._id,
      participants: [],
      attachments: [],
      meetingCode: 'OTHER1',
    });
    await expect(s.meetings.admission(as(u.stranger), id(), 'OTHER1')).rejects.toMatchObject({
      code: 'meeting_not_found',
    });
    await s.repos.events(T).transition(other._id, ['scheduled'], 'cancelled');
    await expect(s.meetings.admission(as(u.host), String(other._id))).rejects.toMatchObject({ code: 'invalid_state' });
  });
});

describe('ending and removing', () => {
  it('ends a started meeting and closes its room: earlier join tokens are refused; ending again only closes again', async () => {
    const data = await s.meetings.initEvent(as(u.host), id());
    const ended = await s.meetings.endEvent(T, id());
    expect(ended.status).toBe('ended');
    expect(s.vcs.closed.has(data.join.roomName)).toBe(true);
    await expect(s.vcs.verifyJoinToken(data.join.token, data.join.roomName)).rejects.toMatchObject({
      code: 'token_invalid',
    });
    expect((await s.meetings.endEvent(T, id())).status).toBe('ended');
  });

  it("keeps the meeting's last seq with its end, and tells an actor without a snapshot how the meeting ended", async () => {
    expect(await s.meetings.meetingEnd(T, id())).toBeNull();
    await s.meetings.initEvent(as(u.host), id());
    expect(await s.meetings.meetingEnd(T, id())).toBeNull();
    await s.meetings.endEvent(T, id(), { seq: 5 });
    expect(await s.meetings.meetingEnd(T, id())).toEqual({ status: 'ended', at: expect.any(String), seq: 5 });
    // Ended again (a turn lost after its write): the number is raised, never lowered.
    await s.meetings.endEvent(T, id(), { seq: 4 });
    await s.meetings.keepLastSeq(T, id(), 7);
    expect(await s.meetings.meetingEnd(T, id())).toMatchObject({ status: 'ended', seq: 7 });
    expect(await s.meetings.meetingEnd(T, 'not-an-id')).toBeNull();
    expect(await s.meetings.meetingEnd(T, new Types.ObjectId().toHexString())).toBeNull();
    await s.repos.events(T).transition(event._id, ['ended'], 'completed');
    expect(await s.meetings.meetingEnd(T, id())).toMatchObject({ status: 'completed', seq: 7 });
  });

  it('a meeting that has not started cannot be ended', async () => {
    await expect(s.meetings.endEvent(T, id())).rejects.toMatchObject({ code: 'invalid_state' });
    await expect(s.meetings.endEvent(T, new Types.ObjectId().toHexString())).rejects.toMatchObject({
      code: 'event_not_found',
    });
  });

  it('only the organizer and host participants are hosts', async () => {
    expect(await s.meetings.isHost(T, id(), String(u.host._id))).toBe(true);
    expect(await s.meetings.isHost(T, id(), String(u.cohost._id))).toBe(true);
    expect(await s.meetings.isHost(T, id(), String(u.patient._id))).toBe(false);
    expect(await s.meetings.isHost(T, id(), String(u.stranger._id))).toBe(false);
  });

  it('removing a headset takes its device identity out of the room; its earlier token is refused', async () => {
    await s.meetings.initEvent(as(u.host), id());
    const d = await s.meetings.joinByCode(T, 'ROOM42', { kind: 'principal', principal: as(u.headset) });
    await s.meetings.removeFromRoom(T, id(), { userId: String(u.headset._id), device: false });
    expect(s.vcs.removals).toEqual([{ roomName: d.join.roomName, identity: `device:${u.headset._id}` }]);
    await expect(s.vcs.verifyJoinToken(d.join.token, d.join.roomName)).rejects.toMatchObject({ code: 'token_invalid' });
  });
});
