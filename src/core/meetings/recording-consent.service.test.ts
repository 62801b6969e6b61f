import { beforeEach, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import type { RecordingConsentAnswer } from '../../contracts/meeting.schema.js';
import type { EventRecord } from '../../data/repositories/event.repository.js';
import {
  fakeDirectoryServices,
  type FakeDirectoryServices,
} from '../../../test/support/fakes/directory.fake-services.js';

/**
 * Recording consent (decision 910) on in-memory fakes: the tenant's policy over the defaults, each answer
 * kept with its event once per person and request, and every answer audited.
 */
const T = 'clinic';
let s: FakeDirectoryServices;
let event: EventRecord;
const host = new Types.ObjectId();
const patient = new Types.ObjectId();

function answer(over: Partial<RecordingConsentAnswer> = {}): RecordingConsentAnswer {
  return {
    requestId: 'req-1',
    userId: String(patient),
    username: 'pat',
    role: 'participant',
    tenantRole: 'patient',
    question: 'May this consultation be recorded?',
    policy: 'all',
    requestedBy: String(host),
    requestedAt: '2026-11-27T10:00:00.000Z',
    consent: true,
    at: '2026-11-27T10:00:05.000Z',
    late: false,
    implicit: false,
    ...over,
  };
}

const stored = async () => (await s.repos.events(T).findById(event._id))!.recordingConsents;

beforeEach(async () => {
  s = fakeDirectoryServices();
  s.mongo.provision(T);
  event = await s.repos.events(T).create({
    name: 'Recorded consultation',
    startAt: new Date('2026-11-27T10:00:00Z'),
    endAt: new Date('2026-11-27T10:30:00Z'),
    organizerId: host,
    participants: [{ userId: patient, role: 'participant' }],
    attachments: [],
    meetingCode: 'REC001',
  });
});

describe('the policy', () => {
  it('is off by default, and the tenant setting once stored', async () => {
    expect(await s.recordingConsent.settings(T)).toEqual({ policy: 'off', timeoutSeconds: 120 });
    await s.repos.settings(T).setPaths({
      'meetings.recordingConsent': 'patients',
      'meetings.recordingConsentTimeoutSeconds': 30,
    });
    expect(await s.recordingConsent.settings(T)).toEqual({ policy: 'patients', timeoutSeconds: 30 });
  });

  it('a policy outside the stored schema is refused by the store, as the database refuses it', async () => {
    await expect(s.repos.settings(T).setPaths({ 'meetings.recordingConsent': 'sometimes' })).rejects.toMatchObject({
      name: 'ValidationError',
    });
  });
});

describe('answers', () => {
  it('are kept with the event: who, when, what was asked, the answer; and audited', async () => {
    await s.recordingConsent.record(T, String(event._id), answer());
    expect(await stored()).toEqual([
      expect.objectContaining({
        key: `req-1:${patient}`,
        requestId: 'req-1',
        userId: patient,
        consent: true,
        question: 'May this consultation be recorded?',
        requestedBy: host,
        requestedAt: new Date('2026-11-27T10:00:00.000Z'),
        at: new Date('2026-11-27T10:00:05.000Z'),
      }),
    ]);
    const [entry] = await s.audit.list(T, { action: 'recording.consent' });
    expect(entry).toMatchObject({
      actorId: String(patient),
      eventId: String(event._id),
      details: expect.objectContaining({ requestId: 'req-1', consent: true, policy: 'all', tenantRole: 'patient' }),
    });
  });

  it('a retried answer is stored once, and audited again (never left unaudited)', async () => {
    await s.recordingConsent.record(T, String(event._id), answer());
    await s.recordingConsent.record(T, String(event._id), answer({ consent: false }));
    expect((await stored()).map((c) => c.consent)).toEqual([true]);
    expect(await s.audit.list(T, { action: 'recording.consent' })).toHaveLength(2);
  });

  it('each person and each request has its own answer', async () => {
    await s.recordingConsent.record(T, String(event._id), answer());
    await s.recordingConsent.record(T, String(event._id), answer({ requestId: 'req-2', consent: false, late: true }));
    await s.recordingConsent.record(T, String(event._id), answer({ userId: String(host), implicit: true }));
    expect((await stored()).map((c) => c.key)).toEqual([`req-1:${patient}`, `req-2:${patient}`, `req-1:${host}`]);
  });

  it('a requester that is not a user (a guest) is kept without a requester id', async () => {
    await s.recordingConsent.record(T, String(event._id), answer({ requestedBy: 'guest:1234' }));
    expect((await stored())[0]).not.toHaveProperty('requestedBy');
  });

  it('a malformed event or user id is a coded not-found, and nothing is audited', async () => {
    await expect(s.recordingConsent.record(T, 'not-an-id', answer())).rejects.toMatchObject({
      code: 'event_not_found',
    });
    await expect(s.recordingConsent.record(T, String(event._id), answer({ userId: 'x' }))).rejects.toMatchObject({
      code: 'user_not_found',
    });
    expect(await s.audit.list(T, { action: 'recording.consent' })).toEqual([]);
  });
});
