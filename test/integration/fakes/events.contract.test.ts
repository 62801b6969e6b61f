import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { toAppError } from '../../../src/kernel/errors.js';
import type { NewEvent } from '../../../src/data/repositories/event.repository.js';
import { CONTRACT_SIDES, type ContractSide } from '../../support/fakes/contract.js';

/** The events contract (src/data/repositories/event.repository.ts) on the in-memory fake and the real repository. */
describe.each(CONTRACT_SIDES)('events on %s', (_name, open) => {
  let side: ContractSide;
  const T = 'events';
  const r = () => side.repos(T);
  const organizer = new Types.ObjectId();
  const patient = new Types.ObjectId();
  const stranger = new Types.ObjectId();
  const headset = new Types.ObjectId();
  let n = 0;
  const event = (over: Partial<NewEvent> = {}): NewEvent => ({
    name: `Consultation ${++n}`,
    startAt: new Date(Date.UTC(2026, 10, 1, 8 + n)),
    endAt: new Date(Date.UTC(2026, 10, 1, 9 + n)),
    organizerId: organizer,
    participants: [{ userId: patient, role: 'participant' }],
    attachments: [],
    meetingCode: `CODE${String(n).padStart(2, '0')}${Math.random().toString(36).slice(2, 6).toUpperCase()}`,
    ...over,
  });

  beforeAll(async () => {
    side = await open();
    await side.provision(T);
  });
  afterAll(async () => side.close());

  it('creates a scheduled event read back with its defaults; a taken meeting code is a coded conflict', async () => {
    const e = await r().events.create(event());
    const read = await r().events.findById(e._id);
    expect(read).toMatchObject({
      status: 'scheduled',
      participantIds: [patient],
      deviceIds: [],
      recordingConsents: [],
      waitingRoom: null,
      hasLedger: false,
      nameLower: e.name.toLowerCase(),
    });
    expect(read).not.toHaveProperty('outbox');
    expect(read?.participants).toEqual([{ userId: patient, role: 'participant' }]);
    const dup = await r()
      .events.create(event({ meetingCode: e.meetingCode }))
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(toAppError(dup).code).toBe('conflict');
  });

  it('shows an event to its organizer, participants and attached devices only; by code to anyone', async () => {
    const e = await r().events.create(event());
    expect(await r().events.findVisible(e._id, organizer)).not.toBeNull();
    expect(await r().events.findVisible(e._id, patient)).not.toBeNull();
    expect(await r().events.findVisible(e._id, stranger)).toBeNull();
    expect(await r().events.findVisible(e._id, headset)).toBeNull();
    const added = await r().events.addDevice(e._id, headset);
    await r().events.addDevice(e._id, headset);
    expect(added?.deviceIds).toEqual([headset]);
    expect((await r().events.findById(e._id))?.deviceIds).toEqual([headset]);
    expect(await r().events.findVisible(e._id, headset)).not.toBeNull();
    expect(String((await r().events.findByMeetingCode(e.meetingCode))?._id)).toBe(String(e._id));
    expect(await r().events.findByMeetingCode('NOSUCH')).toBeNull();
  });

  it('moves an event only from the given states, once, with its outbox entries', async () => {
    const e = await r().events.create(event());
    expect(await r().events.transition(e._id, ['started'], 'ended')).toBeNull();
    const at = new Date('2026-11-01T10:00:00Z');
    const moved = await r().events.transition(e._id, ['scheduled'], 'started', { startedAt: at }, (now) => [
      { id: `evt-${now.status}`, type: 'consultation.started', at, data: { status: now.status } },
    ]);
    expect(moved).toMatchObject({ status: 'started', startedAt: at });
    expect(moved?.outbox).toEqual([
      { id: 'evt-started', type: 'consultation.started', at, data: { status: 'started' } },
    ]);
    expect(await r().events.transition(e._id, ['scheduled'], 'started')).toBeNull();
    expect(await r().events.transition(new Types.ObjectId(), ['scheduled'], 'started')).toBeNull();
  });

  it("keeps the meeting's last seq with the event, set by its end and never lowered", async () => {
    const e = await r().events.create(event());
    expect((await r().events.findById(e._id))?.meetingSeq).toBeUndefined();
    await r().events.transition(e._id, ['scheduled'], 'started');
    expect(await r().events.transition(e._id, ['started'], 'ended', { meetingSeq: 5 })).toMatchObject({
      meetingSeq: 5,
    });
    await r().events.keepMeetingSeq(e._id, 3);
    expect((await r().events.findById(e._id))?.meetingSeq).toBe(5);
    await r().events.keepMeetingSeq(e._id, 6);
    expect((await r().events.findById(e._id))?.meetingSeq).toBe(6);
    await r().events.keepMeetingSeq(new Types.ObjectId(), 1);
  });

  it('changes an event only while scheduled and only for its organizer', async () => {
    const e = await r().events.create(event());
    expect(await r().events.update(e._id, stranger, { name: 'Hijack' })).toBeNull();
    const changed = await r().events.update(e._id, organizer, {
      name: 'Renamed',
      participants: [{ userId: stranger, role: 'host' }],
      waitingRoom: true,
    });
    expect(changed).toMatchObject({
      name: 'Renamed',
      nameLower: 'renamed',
      participantIds: [stranger],
      waitingRoom: true,
    });
    await r().events.transition(e._id, ['scheduled'], 'cancelled');
    expect(await r().events.update(e._id, organizer, { name: 'Late' })).toBeNull();
  });

  it('keeps one recording consent answer per key and the room it is given', async () => {
    const e = await r().events.create(event());
    const answer = {
      key: 'r1:u1',
      requestId: 'r1',
      userId: patient,
      username: 'pat',
      role: 'participant',
      question: 'Record?',
      policy: 'all',
      requestedAt: new Date('2026-11-01T10:00:00Z'),
      consent: true,
      at: new Date('2026-11-01T10:00:03Z'),
    };
    expect(await r().events.addRecordingConsent(e._id, answer)).toBe(true);
    expect(await r().events.addRecordingConsent(e._id, { ...answer, consent: false })).toBe(false);
    expect(await r().events.addRecordingConsent(new Types.ObjectId(), answer)).toBe(false);
    expect((await r().events.findById(e._id))?.recordingConsents).toEqual([
      { ...answer, tenantRole: '', late: false, implicit: false },
    ]);
    const room = {
      provider: 'embedded',
      roomName: 'room-1',
      url: 'http://x/room-1',
      assignedAt: new Date('2026-11-01T10:00:00Z'),
    };
    expect((await r().events.setRoom(e._id, room))?.room).toEqual(room);
  });

  it("a user's care team and counterparts come from their recent non-cancelled events", async () => {
    const who = new Types.ObjectId();
    const other = new Types.ObjectId();
    const a = await r().events.create(
      event({
        participants: [
          { userId: who, role: 'participant' },
          { userId: other, role: 'guest' },
        ],
      }),
    );
    await r().events.addDevice(a._id, headset);
    const b = await r().events.create(
      event({ organizerId: stranger, participants: [{ userId: who, role: 'participant' }] }),
    );
    await r().events.transition(b._id, ['scheduled'], 'cancelled');
    expect((await r().events.careTeamOf(who, 10)).map(String).sort()).toEqual(
      [organizer, who, other, headset].map(String).sort(),
    );
    expect((await r().events.recentCounterparts(who, 10)).map((c) => [String(c.id), c.at])).toEqual([
      [String(other), a.startAt],
    ]);
  });

  it('lists a caller’s events newest first, by name, from a page key', async () => {
    const me = new Types.ObjectId();
    const made = [];
    for (const name of ['Alpha visit', 'Beta visit', 'Gamma check'])
      made.push(await r().events.create(event({ name, organizerId: me })));
    const names = (rows: { name: string }[]) => rows.map((e) => e.name);
    expect(names(await r().events.list(me, { skip: 0, take: 10 }))).toEqual([
      'Gamma check',
      'Beta visit',
      'Alpha visit',
    ]);
    expect(names(await r().events.list(me, { name: 'VISIT', skip: 0, take: 10 }))).toEqual([
      'Beta visit',
      'Alpha visit',
    ]);
    expect(names(await r().events.list(me, { after: made[2]!, skip: 0, take: 1 }))).toEqual(['Beta visit']);
    expect(await r().events.count(me)).toBe(3);
    expect(await r().events.count(me, 'gamma')).toBe(1);
  });
});
