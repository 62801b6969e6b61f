import { describe, it, expect } from '@jest/globals';
import { meetingActor, type MeetingActorDeps } from './meeting.actor.js';
import type { Caller } from './common.schema.js';
import { turnHarness } from '../../test/support/turn-harness.js';

const T = 'acme';
const who = (userId: string, role = 'clinician'): Caller => ({ userId, username: userId, role, permissions: [] });
const A = 'a'.repeat(24);
const B = 'b'.repeat(24);
const C = 'c'.repeat(24);

function meetingDeps(participants: string[], recordingCalls: string[]): MeetingActorDeps {
  const room = { provider: 'embedded', roomName: 'r1', url: 'embedded://r1' };
  const check = async (_t: string, c: Caller, eventId: string) => {
    if (!participants.includes(c.userId)) throw Object.assign(new Error('x'), { code: 'forbidden' });
    return { eventId, room, token: `tok-${c.userId}` };
  };
  return {
    initEvent: check,
    joinEvent: check,
    isParticipant: async (_t, _e, u) => participants.includes(u),
    startRecording: async () => void recordingCalls.push('start'),
    stopRecording: async () => void recordingCalls.push('stop'),
  };
}

describe('meeting actor turns', () => {
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
