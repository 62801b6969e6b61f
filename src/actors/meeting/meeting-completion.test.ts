import { describe, it, expect } from '@jest/globals';
import { meetingActor, type MeetingActorDeps } from './meeting.actor.js';
import type { Caller } from '../../kernel/caller.js';
import type { MeetingAuditEntry } from './meeting-state.js';
import type { EventCompletion } from '../../core/meetings/completion.service.js';
import type { MeetingEnd } from '../../core/meetings/event-status.js';
import { turnHarness } from '../../../test/support/turn-harness.js';

const T = 'acme';
const A = 'a'.repeat(24);
const B = 'b'.repeat(24);
const P = 'd'.repeat(24);
const person = (id: string, role = 'clinician'): Caller => ({ userId: id, username: id, role, permissions: [] });
const COMPLETION: EventCompletion = {
  conferenceId: 'conf-1',
  startedAt: '2026-01-01T10:00:00.000Z',
  endedAt: '2026-01-01T10:30:00.000Z',
  flags: { hasLedger: true, hasRecording: false, hasChat: true },
  ledgerEntries: 2,
};

/**
 * The event as the completion turn finds it: `completed` (moved before), `audited` (told before), whom
 * the recording service records for, and the meeting's last seq kept with its end (`ended`: endMeeting
 * ended it). The turn's writes are logged.
 */
function setup(
  id: string,
  event: {
    completed?: boolean;
    cancelled?: boolean;
    audited?: boolean;
    recordingFor?: string;
    ended?: boolean;
    seq?: number;
  } = {},
) {
  const log: string[] = [];
  const audits: MeetingAuditEntry[] = [];
  const data = async (_t: string, c: Caller, eventId: string) => ({
    eventId,
    room: { provider: 'embedded', roomName: 'r1', url: 'embedded://r1' },
    token: `tok-${c.userId}`,
    role: c.userId === A ? 'host' : 'participant',
  });
  const deps: MeetingActorDeps = {
    initEvent: data,
    joinEvent: data,
    admission: async (_t, c, eventId) => ({
      eventId,
      role: c.userId === A ? 'host' : 'participant',
      invited: true,
      waitingRoom: true,
      autoAdmitInvited: false,
      expirySeconds: 60,
    }),
    isParticipant: async () => true,
    isHost: async (_t, _e, u) => u === A,
    startRecording: async () => void log.push('startRecording'),
    stopRecording: async (_t, _e, userId, opts) => void log.push(`stopRecording:${userId}:${opts?.via}`),
    endEvent: async (_t, _e, last) => {
      log.push('endEvent');
      event.ended = true;
      event.seq = Math.max(event.seq ?? 0, last?.seq ?? 0);
    },
    meetingEnd: async (): Promise<MeetingEnd | null> => {
      // `cancelled` stands for the answer of the completion's move (a meeting that ran cannot be cancelled).
      const status = event.completed ? 'completed' : event.ended ? 'ended' : null;
      return status && { status, at: COMPLETION.endedAt, seq: event.seq ?? 0 };
    },
    keepLastSeq: async (_t, _e, seq) => {
      log.push(`keepLastSeq:${seq}`);
      event.seq = Math.max(event.seq ?? 0, seq);
    },
    removeFromRoom: async () => undefined,
    audit: async (_t, e) => {
      audits.push(e);
      if (e.action === 'telemetry.complete') event.audited = true;
    },
    consentSettings: async () => ({ policy: 'off', timeoutSeconds: 60 }),
    recordConsent: async () => undefined,
    recordingRunning: async () => !!event.recordingFor,
    recordingOwner: async () => event.recordingFor ?? null,
    attachDevice: async () => undefined,
    completeEvent: async () => {
      if (event.cancelled) return { changed: false, status: 'cancelled', flags: COMPLETION.flags };
      const changed = !event.completed;
      event.completed = true;
      log.push(`completeEvent:${changed}`);
      return { changed, status: 'completed', flags: COMPLETION.flags };
    },
    completionAudited: async () => !!event.audited,
  };
  const h = turnHarness(meetingActor(deps), { tenant: T, kind: 'meeting', id });
  const meetingEvents = () => h.emitted.filter((e) => e.event === 'meetingEvent').map((e) => e.payload);
  const complete = () => h.send({ type: 'complete', completion: COMPLETION });
  /** The same event's actor activated afresh: no snapshot (it expired after the retention, decision 1104). */
  const fresh = () => turnHarness(meetingActor(deps), { tenant: T, kind: 'meeting', id });
  return { h, log, audits, meetingEvents, complete, fresh, event };
}

describe('the conference completion as a meeting actor turn (decision 1090)', () => {
  it('ends the meeting for everyone in it, numbered after what came before, and is audited once', async () => {
    const { h, log, audits, meetingEvents, complete } = setup('ev1', { recordingFor: A });
    await h.send({ type: 'init', caller: person(A) });
    await h.send({ type: 'join', caller: person(B) });
    expect(await h.send({ type: 'join', caller: person(P, 'patient') })).toMatchObject({ status: 'waiting' });
    const before = h.state.seq;

    expect(await complete()).toEqual({ changed: true, status: 'completed', flags: COMPLETION.flags, seq: before + 2 });
    expect(log).toEqual([`completeEvent:true`, `stopRecording:${A}:telemetry`, `keepLastSeq:${before + 2}`]);
    expect(meetingEvents().slice(-2)).toEqual([
      expect.objectContaining({ seq: before + 1, type: 'recordingStopped' }),
      expect.objectContaining({
        seq: before + 2,
        type: 'meetingCompleted',
        data: { status: 'completed', ...COMPLETION.flags },
      }),
    ]);
    expect(meetingEvents().at(-1)!.by).toBeUndefined();
    expect(h.emitted).toContainEqual({
      rooms: [`user:${T}:${P}`],
      event: 'waitingRoom',
      payload: { eventId: 'ev1', state: 'ended' },
    });
    expect(h.emitted.at(-1)).toEqual({
      rooms: [`meeting:${T}:ev1`],
      event: 'move',
      payload: { leave: [`meeting:${T}:ev1`, `meeting-devices:${T}:ev1`] },
    });
    expect(h.state).toMatchObject({
      members: {},
      waiting: [],
      recording: { active: false },
      ended: { by: 'telemetry' },
    });
    expect(audits).toEqual([
      {
        action: 'telemetry.complete',
        outcome: 'success',
        eventId: 'ev1',
        details: { conferenceId: 'conf-1', ledgerEntries: 2, ...COMPLETION.flags, members: [A, B], waiting: [P] },
      },
    ]);
    // Nobody comes in any more.
    await expect(h.send({ type: 'join', caller: person(B) })).rejects.toMatchObject({ code: 'invalid_state' });
  });

  it('a duplicate delivery changes nothing and tells no one', async () => {
    const { h, log, audits, meetingEvents, complete } = setup('ev2');
    await h.send({ type: 'init', caller: person(A) });
    await complete();
    const told = meetingEvents().length;
    const emitted = h.emitted.length;
    expect(await complete()).toMatchObject({ changed: false, status: 'completed', seq: h.state.seq });
    expect(log).toEqual(['completeEvent:true', `keepLastSeq:${h.state.seq}`, 'completeEvent:false']);
    expect(meetingEvents()).toHaveLength(told);
    expect(h.emitted).toHaveLength(emitted);
    expect(audits).toHaveLength(1);
  });

  it('an actor without state whose event was completed and told before tells no one again', async () => {
    const { h, audits, meetingEvents, complete } = setup('ev3', { completed: true, audited: true });
    expect(await complete()).toMatchObject({ changed: false, status: 'completed', seq: 0 });
    expect(meetingEvents()).toEqual([]);
    expect(audits).toEqual([]);
    expect(h.state.completed).toMatchObject({ conferenceId: 'conf-1' });
  });

  it('an actor without state whose event moved in a turn that failed before it was told: told and audited now', async () => {
    const { audits, meetingEvents, complete } = setup('ev4', { completed: true, audited: false });
    expect(await complete()).toMatchObject({ changed: false, status: 'completed', seq: 1 });
    expect(meetingEvents()).toEqual([expect.objectContaining({ seq: 1, type: 'meetingCompleted' })]);
    expect(audits).toHaveLength(1);
  });

  it('after endMeeting: the completion is numbered after meetingEnded and stops nothing again', async () => {
    const { h, log, audits, meetingEvents, complete } = setup('ev5');
    await h.send({ type: 'init', caller: person(A) });
    await h.send({ type: 'endMeeting', caller: person(A) });
    const ended = h.state.ended;
    expect(await complete()).toMatchObject({ changed: true, seq: h.state.seq });
    expect(meetingEvents().map((e) => e.type)).toEqual([
      'meetingStarted',
      'participantJoined',
      'meetingEnded',
      'meetingCompleted',
    ]);
    expect(log).toEqual(['endEvent', 'completeEvent:true', `keepLastSeq:${h.state.seq}`]);
    expect(h.state.ended).toEqual(ended);
    expect(audits.map((a) => a.action)).toEqual(['meeting.end', 'telemetry.complete']);
  });

  it('a cancelled event is not completed: the meeting is left as it is, no one told, nothing audited', async () => {
    const { h, log, audits, meetingEvents, complete } = setup('ev6', { cancelled: true, recordingFor: A });
    await h.send({ type: 'init', caller: person(A) });
    const before = meetingEvents().length;
    expect(await complete()).toMatchObject({ changed: false, status: 'cancelled', seq: h.state.seq });
    expect(meetingEvents()).toHaveLength(before);
    expect(log).toEqual([]);
    expect(audits).toEqual([]);
    expect(h.state.completed).toBeUndefined();
    expect(h.state.ended).toBeUndefined();
  });
});

describe('a completed meeting retires its snapshot (decision 1104)', () => {
  it('the completion retires the snapshot and keeps the last seq; afresh, a late delivery tells and audits nothing', async () => {
    const { h, log, audits, complete, fresh, event } = setup('ev7');
    await h.send({ type: 'init', caller: person(A) });
    await h.send({ type: 'join', caller: person(B) });
    expect(h.retired).toBeUndefined();
    const done = await complete();
    expect(h.retired).toEqual({});
    expect(log).toContain(`keepLastSeq:${done.seq}`);
    expect(event.seq).toBe(done.seq);
    // A duplicate delivery answers and retires again.
    await h.send({ type: 'details', caller: person(A) });
    await complete();
    expect(h.retired).toEqual({});

    // The snapshot expired: a late delivery, a host's control and a read find the meeting over.
    const later = fresh();
    const again = await later.send({ type: 'complete', completion: COMPLETION });
    expect(again).toMatchObject({ changed: false, status: 'completed', seq: done.seq });
    await expect(later.send({ type: 'lockMeeting', caller: person(A) })).rejects.toMatchObject({
      code: 'invalid_state',
    });
    expect(await later.send({ type: 'details', caller: person(A) })).toMatchObject({ ended: true, seq: done.seq });
    expect(later.emitted.filter((e) => e.event === 'meetingEvent')).toEqual([]);
    expect(audits.map((a) => a.action)).toEqual(['telemetry.complete']);
  });

  it("afresh on an event endMeeting ended: the completion is numbered after the meeting's last seq", async () => {
    const { h, log, audits, meetingEvents, complete } = setup('ev8', { ended: true, seq: 7 });
    expect(await complete()).toMatchObject({ changed: true, status: 'completed', seq: 8 });
    expect(meetingEvents()).toEqual([expect.objectContaining({ seq: 8, type: 'meetingCompleted' })]);
    expect(log).toEqual(['completeEvent:true', 'keepLastSeq:8']);
    expect(audits.map((a) => a.action)).toEqual(['telemetry.complete']);
    expect(h.retired).toEqual({});
  });
});
