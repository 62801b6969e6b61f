import { describe, it, expect } from '@jest/globals';
import { meetingActor, type MeetingActorDeps } from './meeting.actor.js';
import type { Caller } from '../../kernel/caller.js';
import type { MeetingState } from './meeting.schema.js';
import type { Admission } from '../../core/meetings/meeting-data.js';
import { turnHarness } from '../../../test/support/turn-harness.js';
import { AppError } from '../../kernel/errors.js';

const T = 'acme';
const who = (userId: string, role = 'clinician'): Caller => ({ userId, username: userId, role, permissions: [] });
const A = 'a'.repeat(24);
const B = 'b'.repeat(24);
const C = 'c'.repeat(24);

function meetingDeps(
  participants: string[],
  recordingCalls: string[],
  policy: Partial<Admission> = {},
  hosts: string[] = [A],
  service = { running: false },
): MeetingActorDeps {
  const room = { provider: 'embedded', roomName: 'r1', url: 'embedded://r1' };
  const check = async (_t: string, c: Caller, eventId: string, code?: string) => {
    if (!participants.includes(c.userId) && !code) throw Object.assign(new Error('x'), { code: 'forbidden' });
    return { eventId, room, token: `tok-${c.userId}`, role: hosts.includes(c.userId) ? 'host' : 'participant' };
  };
  return {
    initEvent: check,
    joinEvent: check,
    admission: async (_t, c, eventId) => ({
      eventId,
      role: hosts.includes(c.userId) ? 'host' : participants.includes(c.userId) ? 'participant' : 'guest',
      invited: participants.includes(c.userId),
      waitingRoom: false,
      autoAdmitInvited: true,
      expirySeconds: 60,
      ...policy,
    }),
    isParticipant: async (_t, _e, u) => participants.includes(u),
    isHost: async (_t, _e, u) => hosts.includes(u),
    // As the recording service: a stop of what does not record is `invalid_state`.
    startRecording: async () => {
      recordingCalls.push('start');
      service.running = true;
    },
    stopRecording: async () => {
      if (!service.running) throw new AppError('invalid_state', 'The event is not being recorded');
      recordingCalls.push('stop');
      service.running = false;
    },
    endEvent: async () => void recordingCalls.push('end'),
    meetingEnd: async () => null,
    keepLastSeq: async () => undefined,
    removeFromRoom: async () => undefined,
    audit: async () => undefined,
    consentSettings: async () => ({ policy: 'off', timeoutSeconds: 60 }),
    recordConsent: async () => undefined,
    recordingRunning: async () => service.running,
    attachDevice: async () => undefined,
    recordingOwner: async () => null,
    completeEvent: async () => ({
      changed: true,
      status: 'completed',
      flags: { hasLedger: false, hasRecording: false, hasChat: false },
    }),
    completionAudited: async () => false,
  };
}

describe('meeting actor turns', () => {
  it('a join hands the event its admission read to the join details, so it is read once (decision 1135)', async () => {
    const seen: unknown[] = [];
    const deps = meetingDeps([A, B], []);
    const admission = deps.admission;
    deps.admission = async (...a) => ({ ...(await admission(...a)), event: { marker: a[1].userId } as never });
    const joinEvent = deps.joinEvent;
    const held: unknown[] = [];
    deps.joinEvent = async (t, c, id, code, event, isHeld) => {
      seen.push(event);
      held.push(isHeld);
      return joinEvent(t, c, id, code);
    };
    const h = turnHarness(meetingActor(deps), { tenant: T, kind: 'meeting', id: 'ev1' });
    await h.send({ type: 'init', caller: who(A) });
    await h.send({ type: 'join', caller: who(B) });
    // A member joining again (another device, a rejoin) is not admitted again: the join is told the
    // meeting holds them (decision 1160: the event as an earlier join read it serves).
    await h.send({ type: 'join', caller: who(B) });
    expect(seen).toEqual([{ marker: B }, undefined]);
    expect(held).toEqual([false, true]);
  });

  it('numbers meetingEvents in turn order and gates actions on membership', async () => {
    const rec: string[] = [];
    const h = turnHarness(meetingActor(meetingDeps([A, B], rec)), { tenant: T, kind: 'meeting', id: 'ev1' });
    const data = await h.send({ type: 'init', caller: who(A) });
    expect(data).toMatchObject({ eventId: 'ev1', token: `tok-${A}`, meeting: { started: true } });
    await h.send({ type: 'join', caller: who(B) });
    await expect(h.send({ type: 'notify', caller: who(C), action: 'x' })).rejects.toMatchObject({ code: 'forbidden' });
    await h.send({ type: 'notify', caller: who(B), action: 'raiseHand', data: { up: true } });
    await h.send({ type: 'startRecording', caller: who(A) });
    await h.send({ type: 'startRecording', caller: who(A) });
    await h.send({ type: 'stopRecording', caller: who(A) });
    const events = h.emitted.filter((e) => e.event === 'meetingEvent').map((e) => [e.payload.seq, e.payload.type]);
    expect(events).toEqual([
      [1, 'meetingStarted'],
      [2, 'participantJoined'],
      [3, 'participantJoined'],
      [4, 'notify'],
      [5, 'recordingStarted'],
      [6, 'recordingStopped'],
    ]);
    expect(rec).toEqual(['start', 'stop']);
    expect(await h.send({ type: 'isMember', userId: C })).toEqual({ member: false });
    await expect(h.send({ type: 'details', caller: who(C) })).rejects.toMatchObject({ code: 'meeting_not_found' });
  });

  it('a stop retried after its first attempt stopped the recording and the turn was lost ends stopped, as endMeeting does', async () => {
    // The first attempt's turn stopped the recording service and its node went before the turn's save:
    // the next owner holds the state from before it (recording active) while nothing records (run 35).
    for (const last of ['stopRecording', 'endMeeting'] as const) {
      const rec: string[] = [];
      const service = { running: false };
      const h = turnHarness(meetingActor(meetingDeps([A, B], rec, {}, [A], service)), {
        tenant: T,
        kind: 'meeting',
        id: `ev-${last}`,
      });
      await h.send({ type: 'init', caller: who(A) });
      await h.send({ type: 'startRecording', caller: who(A) });
      service.running = false;
      const answer = await h.send({ type: last, caller: who(A) });
      expect(answer).toMatchObject(last === 'endMeeting' ? { ended: true } : { recording: { active: false } });
      expect(h.state.recording.active).toBe(false);
      expect(rec).toEqual(last === 'endMeeting' ? ['start', 'end'] : ['start']);
      const told = h.emitted.filter((e) => e.event === 'meetingEvent').map((e) => e.payload.type);
      expect(told.filter((t) => t === 'recordingStopped')).toHaveLength(1);
      // Asked again: the same state, nobody told twice.
      if (last === 'stopRecording') {
        await h.send({ type: 'stopRecording', caller: who(A) });
        expect(h.emitted.filter((e) => e.payload?.type === 'recordingStopped')).toHaveLength(1);
      }
    }
  });

  it('answers reads of an older snapshot from its state as it is (reads see it frozen, decision 1120)', async () => {
    // A snapshot from before the waiting room, host grants and host requests: none of their fields.
    const older = {
      eventId: 'ev-old',
      started: true,
      members: { [A]: { userId: A, username: A, role: 'host', joinedAt: '2026-01-01T00:00:00.000Z', canHost: true } },
      deviceIds: [],
      recording: { active: false },
      seq: 1,
    } as unknown as MeetingState;
    const h = turnHarness(meetingActor(meetingDeps([A, B], [])), { tenant: T, kind: 'meeting', id: 'ev-old' }, older);
    expect(await h.send({ type: 'details', caller: who(A) })).toMatchObject({ seq: 1, waiting: [] });
    expect(await h.send({ type: 'waitingRoom', caller: who(A) })).toEqual({ eventId: 'ev-old', waiting: [] });
    expect(await h.send({ type: 'isMember', userId: A })).toEqual({ member: true });
    expect(await h.send({ type: 'members' })).toEqual({ memberIds: [A], deviceIds: [] });
    expect(h.state).toBe(older);
    // The first change brings it to the current shape.
    await h.send({ type: 'join', caller: who(B) });
    expect(h.state).toMatchObject({ waiting: [], barred: {}, roleGrants: {}, hostRequests: {} });
  });

  it('shares and clears images to the headsets of the meeting', async () => {
    const h = turnHarness(meetingActor(meetingDeps([A], [])), { tenant: T, kind: 'meeting', id: 'ev2' });
    await h.send({ type: 'init', caller: who(A) });
    await h.send({
      type: 'shareImage',
      caller: who(A),
      req: { eventId: 'ev2', image: { url: 'https://x.test/a.png' } },
    });
    await h.send({ type: 'clearImage', caller: who(A) });
    expect(h.emitted.filter((e) => e.rooms[0] === `meeting-devices:${T}:ev2`).map((e) => e.event)).toEqual([
      'onShareImage',
      'onClearImage',
    ]);
  });
});

describe('meeting actor waiting room', () => {
  const P = 'd'.repeat(24);
  const G = 'e'.repeat(24);
  const patient = (id: string) => who(id, 'patient');

  it('queues patients and guests, tells them their position, and admits or denies them once', async () => {
    const h = turnHarness(meetingActor(meetingDeps([A, P], [], { waitingRoom: true, autoAdmitInvited: false })), {
      tenant: T,
      kind: 'meeting',
      id: 'ev3',
    });
    await h.send({ type: 'init', caller: who(A) });
    expect(await h.send({ type: 'join', caller: patient(P) })).toMatchObject({ status: 'waiting', position: 1 });
    expect(await h.send({ type: 'join', caller: who(G, 'guest'), code: 'CODE1234' })).toMatchObject({
      status: 'waiting',
      position: 2,
    });
    // A second join of someone waiting keeps its place.
    expect(await h.send({ type: 'join', caller: patient(P) })).toMatchObject({ status: 'waiting', position: 1 });
    expect(h.emitted.filter((e) => e.event === 'waitingRoomUpdated').at(-1)!.payload.waiting).toHaveLength(2);
    expect(
      (await h.send({ type: 'details', caller: who(A) })).waiting.map((w: { userId: string }) => w.userId),
    ).toEqual([P, G]);
    await expect(h.send({ type: 'admit', caller: patient(P), userId: P })).rejects.toMatchObject({
      code: 'not_meeting_host',
    });
    const admitted = await h.send({ type: 'admit', caller: who(A), userId: P });
    expect(admitted).toMatchObject({ admitted: [P], waiting: [{ userId: G, position: 1 }] });
    expect(await h.send({ type: 'admit', caller: who(A), userId: P })).toMatchObject({ admitted: [] });
    const toP = h.emitted.filter((e) => e.event === 'waitingRoom' && e.rooms[0] === `user:${T}:${P}`);
    expect(toP.at(-1)!.payload).toMatchObject({ state: 'admitted', meeting: { token: `tok-${P}` } });
    expect(h.emitted.find((e) => e.event === 'move')).toMatchObject({
      rooms: [`user:${T}:${P}`],
      payload: { join: [`meeting:${T}:ev3`] },
    });
    const toG = () => h.emitted.filter((e) => e.event === 'waitingRoom' && e.rooms[0] === `user:${T}:${G}`);
    expect(toG().at(-1)!.payload).toMatchObject({ state: 'waiting', position: 1 });
    await h.send({ type: 'deny', caller: who(A), userId: G, message: 'Wrong clinic' });
    expect(toG().at(-1)!.payload).toMatchObject({ state: 'denied', message: 'Wrong clinic' });
    // A denied guest who tries again waits for a host's decision, marked as returning.
    expect(await h.send({ type: 'join', caller: who(G, 'guest'), code: 'CODE1234' })).toMatchObject({
      status: 'waiting',
    });
    expect((await h.send({ type: 'waitingRoom', caller: who(A) })).waiting).toEqual([
      expect.objectContaining({ userId: G, returning: 'denied' }),
    ]);
    const types = h.emitted.filter((e) => e.event === 'meetingEvent').map((e) => e.payload.type);
    expect(types.filter((t) => t === 'participantAdmitted')).toHaveLength(1);
    expect(types).toContain('participantDenied');
  });

  it('lets invited participants in when configured, and expires or drops entries that leave', async () => {
    const h = turnHarness(meetingActor(meetingDeps([A, P], [], { waitingRoom: true })), {
      tenant: T,
      kind: 'meeting',
      id: 'ev4',
    });
    await h.send({ type: 'init', caller: who(A) });
    expect(await h.send({ type: 'join', caller: patient(P) })).toMatchObject({ token: `tok-${P}` });
    await h.send({ type: 'join', caller: who(G, 'guest'), code: 'CODE1234' });
    await h.send({ type: 'join', caller: who(C, 'guest'), code: 'CODE1234' });
    expect(h.timers.has('waitingExpiry')).toBe(true);
    expect(await h.send({ type: 'leaveWaiting', caller: who(G, 'guest') })).toEqual({ left: true });
    expect(h.state.waiting!.map((e) => e.userId)).toEqual([C]);
    h.state.waiting![0]!.expiresAt = Date.now() - 1;
    await h.fire('waitingExpiry');
    expect(h.state.waiting).toEqual([]);
    expect(h.emitted.filter((e) => e.event === 'waitingRoom').at(-1)!.payload).toMatchObject({ state: 'expired' });
    expect(h.timers.has('waitingExpiry')).toBe(false);
  });
});
